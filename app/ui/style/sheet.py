"""The one application stylesheet, generated from the tokens (issue 27).

Widgets never carry colours or pixel sizes of their own: they name what they are through dynamic
properties and object names, and the rules here draw them.

- ``tone``: ``muted``, ``success``, ``warning``, ``danger``, ``info`` on a label (its text colour)
- ``type``: ``caption``, ``small``, ``subheading``, ``heading``, ``title`` on a label (the type scale)
- ``card="true"`` on a ``QFrame``: a raised, rounded block; ``banner`` = a tone: a notice strip
- ``chip`` = a tone on a label: a small rounded badge (a verdict)
- ``iconButton="true"`` on a ``QToolButton``: a flat icon button; ``primary="true"`` on a push
  button: the one main action of a place
- ``nav="true"`` on the navigation rail's buttons; ``QWidget#rail``, ``#statusStrip``,
  ``#composer``, ``#attachment``, ``#sunken`` for the few surfaces with a fill of their own

Pure Python: no Qt import, so the sheet can be checked without a display. Sizes are in points for
text (multiples of the system's ``base_pt``, so the sheet follows the person's font size) and in
device-independent pixels for spacing, radii and borders.
"""

from __future__ import annotations

from app.ui.style.tokens import RADII, SPACING, TYPE, ColorRoles, Radii, Scheme, Spacing, colors

TONES = ("muted", "success", "warning", "danger", "info")


def _tone_color(c: ColorRoles, tone: str) -> str:
    return {"muted": c.muted_text, "success": c.success, "warning": c.warning,
            "danger": c.danger, "info": c.info}[tone]


def _buttons(c: ColorRoles, s: Spacing, r: Radii) -> str:
    """Tooltips, push buttons (plain, primary, flat) and tool buttons (icons, the rail)."""
    return f"""
QToolTip {{ color: {c.text}; background: {c.raised_surface}; border: 1px solid {c.border};
    padding: {s.xs}px {s.sm}px; border-radius: {r.sm}px; }}

QPushButton {{ color: {c.text}; background: {c.raised_surface}; border: 1px solid {c.border};
    border-radius: {r.md}px; padding: {s.sm - 1}px {s.lg - 1}px; min-height: 1.2em; }}
QPushButton:hover {{ border-color: {c.muted_text}; }}
QPushButton:pressed {{ background: {c.sunken}; }}
QPushButton:focus {{ border: 2px solid {c.focus}; padding: {s.sm - 2}px {s.lg - 2}px; }}
QPushButton:disabled {{ color: {c.border}; background: {c.surface}; border-color: {c.border}; }}
QPushButton[primary="true"] {{ color: {c.on_accent}; background: {c.accent};
    border-color: {c.accent}; font-weight: 600; }}
QPushButton[primary="true"]:hover {{ border-color: {c.text}; }}
QPushButton[primary="true"]:focus {{ border: 2px solid {c.text}; }}
QPushButton[primary="true"]:disabled {{ color: {c.border}; background: {c.surface};
    border-color: {c.border}; font-weight: normal; }}
QPushButton[flat="true"] {{ background: transparent; border-color: transparent; }}
QPushButton[flat="true"]:hover {{ background: {c.sunken}; }}
QPushButton[flat="true"]:focus {{ border: 2px solid {c.focus}; }}

QToolButton {{ color: {c.text}; border: 1px solid transparent; border-radius: {r.md}px;
    padding: {s.xs}px; }}
QToolButton:hover {{ background: {c.sunken}; }}
QToolButton:focus {{ border: 2px solid {c.focus}; padding: {s.xs - 1}px; }}
QToolButton:checked {{ background: {c.sunken}; }}
QToolButton:disabled {{ color: {c.muted_text}; }}
QToolButton[nav="true"] {{ padding: {s.sm}px; border-radius: {r.lg}px; }}
QToolButton[nav="true"]:checked {{ background: {c.accent}; color: {c.on_accent}; }}
QToolButton[nav="true"]:focus {{ border: 2px solid {c.focus}; padding: {s.sm - 1}px; }}
QToolButton[nav="true"]:checked:focus {{ border: 2px solid {c.text}; }}

"""


def _fields(c: ColorRoles, s: Spacing, r: Radii, up: str, down: str) -> str:
    """Text fields, spin boxes and combo boxes, with their arrows and focus rings."""
    return f"""
QLineEdit, QPlainTextEdit, QTextEdit, QSpinBox, QDoubleSpinBox, QComboBox {{
    color: {c.text}; background: {c.raised_surface}; border: 1px solid {c.border};
    border-radius: {r.sm}px; padding: {s.xs}px {s.sm}px;
    selection-background-color: {c.accent}; selection-color: {c.on_accent}; }}
QLineEdit:focus, QPlainTextEdit:focus, QTextEdit:focus, QSpinBox:focus, QDoubleSpinBox:focus,
QComboBox:focus {{ border: 2px solid {c.focus}; padding: {s.xs - 1}px {s.sm - 1}px; }}
QLineEdit:disabled, QComboBox:disabled, QSpinBox:disabled {{ color: {c.muted_text};
    background: {c.surface}; }}
QSpinBox, QDoubleSpinBox {{ padding-right: {s.xl + s.xs}px; }}
QSpinBox::up-button, QDoubleSpinBox::up-button, QSpinBox::down-button,
QDoubleSpinBox::down-button {{ subcontrol-origin: border; width: {s.xl}px; border: none;
    background: transparent; }}
QSpinBox::up-button, QDoubleSpinBox::up-button {{ subcontrol-position: top right; }}
QSpinBox::down-button, QDoubleSpinBox::down-button {{ subcontrol-position: bottom right; }}
QSpinBox::up-button:hover, QDoubleSpinBox::up-button:hover, QSpinBox::down-button:hover,
QDoubleSpinBox::down-button:hover {{ background: {c.sunken}; }}
QSpinBox::up-arrow, QDoubleSpinBox::up-arrow {{ {up} width: {s.md + 2}px;
    height: {s.md + 2}px; }}
QSpinBox::down-arrow, QDoubleSpinBox::down-arrow {{ {down} width: {s.md + 2}px;
    height: {s.md + 2}px; }}
QComboBox {{ padding-right: {s.xl + s.xs}px; }}
QComboBox::drop-down {{ subcontrol-origin: padding; subcontrol-position: center right;
    width: {s.xl + s.xs}px; border: none; background: transparent; }}
QComboBox::down-arrow {{ {down} width: {s.lg}px; height: {s.lg}px; }}
QComboBox QAbstractItemView {{ background: {c.raised_surface}; color: {c.text};
    selection-background-color: {c.accent}; selection-color: {c.on_accent}; }}

"""


def _views(c: ColorRoles, s: Spacing, r: Radii) -> str:
    """Lists, tables, tabs, progress bars, scroll bars, splitters, groups and menus."""
    return f"""
QListView, QTreeView, QTableView, QListWidget {{ background: {c.raised_surface};
    color: {c.text}; border: 1px solid {c.border}; border-radius: {r.md}px;
    selection-background-color: {c.accent}; selection-color: {c.on_accent}; outline: 0; }}
QListView:focus, QTreeView:focus, QTableView:focus, QListWidget:focus {{
    border: 2px solid {c.focus}; }}
QListView::item, QListWidget::item {{ padding: {s.xs}px {s.sm}px; border-radius: {r.sm}px; }}
QListView::item:hover, QListWidget::item:hover {{ background: {c.sunken}; }}
QListView::item:selected, QListWidget::item:selected {{ background: {c.accent};
    color: {c.on_accent}; }}
QHeaderView::section {{ background: {c.surface}; color: {c.muted_text}; border: none;
    border-bottom: 1px solid {c.border}; padding: {s.xs}px {s.sm}px; }}

QCheckBox:focus, QRadioButton:focus {{ color: {c.text}; }}
QCheckBox::indicator:focus, QRadioButton::indicator:focus {{ border: 2px solid {c.focus};
    border-radius: {r.sm}px; }}

QTabWidget::pane {{ border: none; }}
QTabBar::tab {{ color: {c.muted_text}; background: transparent; border: none;
    border-bottom: 2px solid transparent; padding: {s.sm}px {s.lg}px; }}
QTabBar::tab:selected {{ color: {c.text}; border-bottom: 2px solid {c.accent}; }}
QTabBar::tab:hover {{ color: {c.text}; }}
QTabBar::tab:focus {{ border-bottom: 2px solid {c.focus}; }}

QProgressBar {{ background: {c.sunken}; border: none; border-radius: {r.sm}px;
    max-height: {s.md}px; text-align: center; color: transparent; }}
QProgressBar::chunk {{ background: {c.accent}; border-radius: {r.sm}px; }}

QScrollBar:vertical {{ background: transparent; width: {s.lg - 2}px; margin: 0; }}
QScrollBar::handle:vertical {{ background: {c.border}; border-radius: {r.sm}px;
    min-height: {s.xxxl}px; margin: {s.xxs}px; }}
QScrollBar::handle:vertical:hover {{ background: {c.muted_text}; }}
QScrollBar:horizontal {{ background: transparent; height: {s.lg - 2}px; margin: 0; }}
QScrollBar::handle:horizontal {{ background: {c.border}; border-radius: {r.sm}px;
    min-width: {s.xxxl}px; margin: {s.xxs}px; }}
QScrollBar::add-line, QScrollBar::sub-line {{ width: 0; height: 0; }}
QScrollBar::add-page, QScrollBar::sub-page {{ background: transparent; }}

QSplitter::handle {{ background: {c.border}; }}
QSplitter::handle:horizontal {{ width: 1px; }}
QSplitter::handle:vertical {{ height: 1px; }}

QGroupBox {{ border: none; margin-top: {s.xl}px; font-weight: 600; }}
QGroupBox::title {{ subcontrol-origin: margin; left: 0; padding: 0; color: {c.text}; }}

QMenu {{ background: {c.raised_surface}; color: {c.text}; border: 1px solid {c.border};
    border-radius: {r.md}px; padding: {s.xs}px; }}
QMenu::item {{ padding: {s.xs}px {s.xl}px {s.xs}px {s.md}px; border-radius: {r.sm}px; }}
QMenu::item:selected {{ background: {c.accent}; color: {c.on_accent}; }}
QMenu::separator {{ height: 1px; background: {c.border}; margin: {s.xs}px {s.sm}px; }}

"""


def _surfaces(c: ColorRoles, s: Spacing, r: Radii, base_pt: float) -> str:
    """Cards, the rail, the composer, the status strip and the type scale."""
    return f"""
QFrame[card="true"] {{ background: {c.raised_surface}; border: 1px solid {c.border};
    border-radius: {r.lg}px; }}
QFrame[card="true"]:focus {{ border: 2px solid {c.focus}; }}
QWidget#rail {{ background: {c.sunken}; }}
QWidget#sunken, QFrame#sunken {{ background: {c.sunken}; border-radius: {r.md}px; }}
QFrame#composer {{ background: {c.raised_surface}; border: 1px solid {c.border};
    border-radius: {r.lg}px; }}
QFrame#composer QPlainTextEdit, QFrame#composer QTextEdit {{ border: none;
    background: transparent; }}
QFrame#attachment {{ background: {c.raised_surface}; border: 1px solid {c.border};
    border-radius: {r.md}px; }}
QFrame#statusStrip {{ background: {c.surface}; border-bottom: 1px solid {c.border}; }}
QLabel {{ background: transparent; }}
QLabel[chip=""] {{ padding: 0; border: none; }}
QLabel[type="caption"] {{ font-size: {TYPE.size(TYPE.caption, base_pt)}pt; }}
QLabel[type="small"] {{ font-size: {TYPE.size(TYPE.small, base_pt)}pt; }}
QLabel[type="subheading"] {{ font-size: {TYPE.size(TYPE.subheading, base_pt)}pt;
    font-weight: 600; }}
QLabel[type="heading"] {{ font-size: {TYPE.size(TYPE.heading, base_pt)}pt; font-weight: 600; }}
QLabel[type="title"] {{ font-size: {TYPE.size(TYPE.title, base_pt)}pt; font-weight: 600; }}
QLabel[type="section"] {{ font-size: {TYPE.size(TYPE.caption, base_pt)}pt; font-weight: 600;
    color: {c.muted_text}; }}
"""


def _tones(c: ColorRoles, s: Spacing, r: Radii, base_pt: float) -> str:
    """Each tone's text colour, chip and banner."""
    parts: list[str] = []
    for tone in TONES:
        hue = _tone_color(c, tone)
        parts.append(f"""
QLabel[tone="{tone}"], QCheckBox[tone="{tone}"] {{ color: {hue}; }}
QLabel[chip="{tone}"] {{ color: {hue}; background: {c.raised_surface};
    border: 1px solid {hue}; border-radius: {r.sm}px; padding: 0 {s.sm}px;
    font-size: {TYPE.size(TYPE.caption, base_pt)}pt; font-weight: 600; }}
QFrame[banner="{tone}"] {{ background: {c.raised_surface}; border: 1px solid {c.border};
    border-left: 4px solid {hue}; border-radius: {r.md}px; }}
""")
    return "".join(parts)


def stylesheet(scheme: Scheme, base_pt: float, arrows: tuple[str, str] = ("", "")) -> str:
    """The whole sheet for ``scheme`` with body text at ``base_pt`` points. ``arrows`` are the
    files of the up and down chevrons drawn in the scheme's muted text colour (a stylesheet can
    show an arrow only from a file; theme.py writes them), forward slashes."""
    c = colors(scheme)
    up, down = (f'image: url("{a}");' if a else "image: none;" for a in arrows)
    s, r = SPACING, RADII
    return "".join((_buttons(c, s, r), _fields(c, s, r, up, down), _views(c, s, r),
                    _surfaces(c, s, r, base_pt), _tones(c, s, r, base_pt)))

