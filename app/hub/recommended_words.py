"""The curated models' blurbs (resources/recommended.json) for the translation
catalog: written by installers/translations.py update, never by hand; the window
shows them through app.hub.recommended, whose Text they match."""

from app.i18n import T_

BLURBS = (
    T_('Tiny and quick; runs on almost any computer. Good for trying Hearth out.'),
    T_('A small, capable all-rounder from Meta; fine on laptops without a GPU.'),
    T_('Strong reasoning for its size; thinks before it answers.'),
    T_("Google's small model; good writing and many languages."),
    T_('The classic 8B assistant; wants about 6 GB of memory.'),
    T_('A capable general model for a GPU with 8 GB or more.'),
    T_('Long context and good at conversation; for a 12 GB GPU.'),
    T_("OpenAI's open-weight model; a mixture of experts that runs well even partly on the CPU."),
    T_('A fast mixture of experts: 30B of knowledge at the speed of a 3B.'),
    T_('Among the best models a single 24 GB GPU can hold.'),
)
