"""Tools a model may call in the chat (issue 31): what a tool is, who may run it, the built-in
ones. Pure Python, no Qt: the window asks the person (app/ui) and the services run the calls."""
