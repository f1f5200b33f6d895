// The as_of slider: one stop per moment the agent learned something (data from a json_script
// block). Moving it sets the date field and names the message; releasing it submits the form, so
// the chosen moment lands in the URL. Text is set with textContent, never as HTML.
(function () {
  function wire(root) {
    var slider = root.querySelector ? root.querySelector("#as_of_slider") : null;
    var data = document.getElementById("as-of-moments");
    if (!slider || !data || slider.dataset.wired) return;
    slider.dataset.wired = "1";
    var stops = JSON.parse(data.textContent);
    var field = slider.form.querySelector("input[name=as_of]");
    var label = document.getElementById("as_of_label");
    var current = field.value;
    stops.forEach(function (s, i) { if (current && s.t <= current) slider.value = i; });
    if (current && label && stops[+slider.value]) {
      label.textContent = "Stop " + (+slider.value + 1) + " of " + stops.length + ": " + stops[+slider.value].label;
    }
    function show() {
      var stop = stops[+slider.value];
      if (!stop) return;
      field.value = stop.t;
      if (label) label.textContent = "Stop " + (+slider.value + 1) + " of " + stops.length + ": " + stop.label;
    }
    slider.addEventListener("input", show);
    slider.addEventListener("change", function () {
      show();
      if (slider.form.requestSubmit) slider.form.requestSubmit(); else slider.form.submit();
    });
  }
  document.addEventListener("DOMContentLoaded", function () { wire(document); });
  document.addEventListener("htmx:afterSettle", function () { wire(document); });
})();
