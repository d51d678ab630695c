"""The command-line entry points (`hearth hardware`, `hearth plan`, `hearth search`, …).

They sit above the pure packages they combine (hardware, hub, library, loading, runner_client),
so none of those imports another just to print something on a terminal.
"""
