// htmx leaves 4xx answers unswapped. A region marked data-swap-errors answers its actions' errors
// (a suggestion already decided, or gone) with its own fragment and the error's status: show it.
document.addEventListener("htmx:beforeSwap", function (event) {
  var status = event.detail.xhr.status;
  if (status >= 400 && status < 500 && event.detail.elt.closest("[data-swap-errors]")) {
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  }
});
