"""Runtimes: the llama.cpp builds the runner can serve with, and which one this machine gets.

Pure logic (no Qt): :mod:`catalog` lists the runtime folders, :mod:`choose` ranks them for a
hardware report, :mod:`selftest` reads and caches ``hearth-runner selftest``, and :mod:`select`
puts the three together off the GUI thread. The folders' format and the ranking rules are the
runner's too (a runner started without ``--runtime`` chooses by them), so they live in the one
part of the runner the app may import, :mod:`runner.wire`; these modules add the app's side:
its data folder, its hardware report, its self-tests and their cache.
"""
