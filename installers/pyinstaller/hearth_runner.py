"""Entry point of the frozen runner (PyInstaller runs this file as ``__main__``)."""

from runner.__main__ import main

raise SystemExit(main())
