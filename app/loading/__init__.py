"""Loading a model with a plan: the fallback ladder, measurements, status texts (no Qt).

The Qt glue that drives these against the runner process is app/services/loader.py.
"""
