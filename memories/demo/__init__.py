"""The demo `manage.py load_demo` loads: the `demo` agent's eight messages (Rafael moves from
Curitiba to São Paulo) and three more agents whose conversations (written for this project)
hold moves, job changes, nicknames, a wedding and ordinary chatter, followed by an operator's
corrections, a retraction and a reinstatement — so the graph, the chains and time travel have
something to show. Every message is dated (the agent's clock): imported today, it answers as
of its own dates."""
