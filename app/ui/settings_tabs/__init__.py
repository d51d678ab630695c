"""The Settings dialog's parts (app/ui/settings_dialog.py lays them out): the settings being
edited (edit.py), the General tab's boxes (general.py), the sharing box (sharing.py) and the
scrolling page and row helpers they share (layout.py)."""
