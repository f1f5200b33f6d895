"""The UI's pages, by area: agents (overview, an agent's home, time travel), entities, facts,
traces, merge suggestions, the entity graph and ask. Every page is one URL: the full page, or its
fragment for an htmx request (dashboard.pages); every operator action is a POST that calls one
service as the logged-in user."""
