"""Entry point of the frozen model server (`hearth serve` starts it; PyInstaller runs this file
as ``__main__``)."""

from server.__main__ import main

raise SystemExit(main())
