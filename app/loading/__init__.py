"""Loading a model with a plan (no Qt): preparing it for the runner build (prepare.py), the
runner's flags (flags.py), the dry run (confirm.py), the fallback ladder, measurements, status
texts, and ``hearth plan`` (cli.py), which prepares a plan exactly as the window does.

The Qt glue that drives these against the runner process is app/services/loader.py.
"""
