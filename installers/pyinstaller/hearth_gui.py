"""Entry point of the frozen app (PyInstaller runs this file as ``__main__``)."""

from app.__main__ import main

raise SystemExit(main())
