"""Hearth's design system in one place (issue 27): the tokens (spacing, radii, a type scale that
follows the system font size, colour roles for light and dark) and the contrast check they pass.

Pure Python: the tokens and the contrast function import no Qt, so a test can check them without
a display; the stylesheet generated from them comes in a later step.
"""
