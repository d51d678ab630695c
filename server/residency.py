"""Which resident models make room for a new one (pure: no I/O, no clock of its own).

Each resident model holds memory on devices (its plan's prediction, by device key: "cpu" or
"<backend>:<index>"). A new model is planned as if it were alone (so it gets the plan it would
get on an empty machine: never a CPU fallback only because another model sits in the way); then
room is made by unloading the least recently used idle models until it fits beside the others.
A model with a request in flight is never unloaded: if only such models stand in the way the
answer is "busy" (503, try again); a model that cannot fit even alone is refused (400).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Resident:
    id: str
    held: Mapping[str, int]  # bytes by device key
    busy: int  # requests in flight
    last_used: float  # the end of its last request (monotonic seconds)


@dataclass(frozen=True)
class Room:
    """Enough room once ``evict`` are unloaded (often none)."""

    evict: tuple[str, ...]


@dataclass(frozen=True)
class Busy:
    """Only models in use stand in the way."""

    blocking: tuple[str, ...]


Decision = Room | Busy


def make_room(need: Mapping[str, int], capacity: Mapping[str, int],
              residents: Sequence[Resident]) -> Decision:
    """Unload idle residents, least recently used first, until ``need`` fits ``capacity`` beside
    what the others hold. ``capacity``: each device's budget with nothing resident."""
    kept = list(residents)
    evict: list[str] = []
    for candidate in sorted((r for r in residents if r.busy == 0), key=lambda r: r.last_used):
        short = _short(need, capacity, kept)
        if not short:
            break
        if any(candidate.held.get(device, 0) > 0 for device in short):
            kept.remove(candidate)  # it holds memory where room is short; others stay
            evict.append(candidate.id)
    if _fits(need, capacity, kept):
        return Room(tuple(evict))
    return Busy(tuple(r.id for r in kept if r.busy))


def _fits(need: Mapping[str, int], capacity: Mapping[str, int],
          residents: Sequence[Resident]) -> bool:
    return not _short(need, capacity, residents)


def _short(need: Mapping[str, int], capacity: Mapping[str, int],
           residents: Sequence[Resident]) -> set[str]:
    """The devices where ``need`` does not fit beside what ``residents`` hold."""
    return {device for device, wanted in need.items() if wanted > 0 and
            sum(r.held.get(device, 0) for r in residents) + wanted > capacity.get(device, 0)}
