"""Hearth's model server: one address that serves every model of the library on request.

A process of its own (``hearth serve``, or started by the window): it plans each model with the
app's Qt-free planner, starts one runner process per resident model (runner/), and forwards each
request to the runner of the model it names, in OpenAI's, Anthropic's, OpenAI Responses' or
Ollama's API. It never imports Qt, the window's services or llama.cpp (the contracts in
pyproject.toml; docs/architecture.md draws the processes).
"""
