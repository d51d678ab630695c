"""Runtimes: the llama.cpp builds the runner can serve with, and which one this machine gets.

Pure logic (no Qt): :mod:`catalog` lists the runtime folders, :mod:`choose` ranks them for a
hardware report, :mod:`selftest` reads and caches ``hearth-runner selftest``, and :mod:`select`
puts the three together off the GUI thread.
"""
