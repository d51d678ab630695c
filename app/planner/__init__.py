"""(model, hardware, wishes) -> LaunchPlan with reasons (no Qt)."""

from app.planner.fallback import next_fallback
from app.planner.memory import Correction, predict
from app.planner.plan import LaunchPlan, plan, plan_for_devices
from app.planner.types import (
    Device,
    DeviceBreakdown,
    Pins,
    PlanDoesNotFitError,
    PlannerError,
    Reason,
    Settings,
    Usage,
    Wishes,
)

__all__ = [
    "Correction",
    "Device",
    "DeviceBreakdown",
    "LaunchPlan",
    "Pins",
    "PlanDoesNotFitError",
    "PlannerError",
    "Reason",
    "Settings",
    "Usage",
    "Wishes",
    "next_fallback",
    "plan",
    "plan_for_devices",
    "predict",
]
