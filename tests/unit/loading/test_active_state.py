"""What is current (app/loading/state.py): each transition of the local load, its failures, a
switch asked for while a model loads or runs, and the chat endpoint decided once, local or
remote, when the model is put in use."""

from __future__ import annotations

from app.loading.endpoint import ChatEndpoint
from app.loading.state import ActiveState, Phase, Step
from app.planner.types import Pins
from app.remote.servers import RemoteModel

A, B = "/models/a.gguf", "/models/b.gguf"
A_READY = ChatEndpoint.local("http://127.0.0.1:5000", "key-a", A)
B_READY = ChatEndpoint.local("http://127.0.0.1:5001", "key-b", B)
BOX = RemoteModel("box", "qwen3")
BOX_AT = ChatEndpoint.remote("http://10.0.0.2/v1", "sk", "qwen3", "Box", "http://10.0.0.2/v1")


def loaded(path: str = A, endpoint: ChatEndpoint = A_READY) -> ActiveState:
    s = ActiveState()
    assert s.load(path) is Step.PLAN
    s.planning(path)
    s.planned()
    for state in ("starting", "loading"):
        assert s.runner_state(state) is Step.NOTHING
    s.runner_state("ready", endpoint)
    return s


def test_a_load_goes_planning_loading_ready_and_its_endpoint_is_the_runners() -> None:
    s = ActiveState()
    assert s.phase is Phase.NONE and s.idle and s.endpoint is None
    assert s.load(A) is Step.PLAN
    assert s.phase is Phase.NONE  # nothing changes until the loader agrees
    s.planning(A)
    assert s.phase is Phase.PLANNING and s.loading and s.busy and not s.idle
    assert s.endpoint is None
    s.planned()
    assert s.phase is Phase.LOADING
    s.runner_state("starting")
    assert s.phase is Phase.LOADING and s.running and s.endpoint is None
    s.runner_state("ready", A_READY)
    assert s.phase is Phase.READY and not s.busy and not s.loading
    assert s.endpoint == A_READY and not s.endpoint.is_remote
    assert s.model_in_use("/runner/model.gguf") == "/runner/model.gguf"


def test_the_model_ready_asked_again_does_nothing_and_a_plan_in_making_refuses_a_load() -> None:
    s = loaded()
    assert s.load(A) is Step.NOTHING and s.phase is Phase.READY
    planning = ActiveState()
    planning.planning(A)
    assert planning.load(B) is Step.NOTHING and planning.phase is Phase.PLANNING


def test_a_plan_that_fails_is_failed_and_load_is_offered_again() -> None:
    s = ActiveState()
    s.planning(A)
    s.load_failed()
    assert s.phase is Phase.FAILED and s.idle and not s.died
    assert s.load(A) is Step.PLAN


def test_a_fallback_step_stays_loading_until_the_loaders_final_word() -> None:
    s = ActiveState()
    s.planning(A)
    s.planned()
    s.runner_state("loading")
    assert s.runner_state("failed") is Step.NOTHING  # out of memory: the ladder decides
    assert s.phase is Phase.LOADING and not s.running and s.busy and not s.idle
    s.retrying()
    s.runner_state("starting")
    assert s.phase is Phase.LOADING and s.running
    s.runner_state("failed")
    s.load_failed()  # no smaller setting was left
    assert s.phase is Phase.FAILED and s.idle and s.endpoint is None


def test_a_runner_that_dies_when_ready_is_failed_and_offers_a_restart() -> None:
    s = loaded()
    s.runner_state("failed")
    assert s.phase is Phase.FAILED and s.endpoint is None and not s.running
    s.runner_died()
    assert s.died and s.idle
    s.restarted()
    assert not s.died
    s.runner_state("starting")
    assert s.phase is Phase.LOADING
    s.runner_state("ready", A_READY)
    assert s.phase is Phase.READY and s.endpoint == A_READY


def test_unload_stops_the_runner_and_ends_at_none() -> None:
    s = loaded()
    assert s.unload() == [Step.CANCEL, Step.STOP]
    assert s.phase is Phase.UNLOADING and s.busy and not s.loading
    s.runner_state("stopping")
    assert s.phase is Phase.UNLOADING and s.endpoint is None
    assert s.runner_state("stopped") is Step.NOTHING
    assert s.phase is Phase.NONE and s.idle


def test_unload_while_planning_cancels_the_plan_with_no_runner_to_stop() -> None:
    s = ActiveState()
    s.planning(A)
    assert s.unload() == [Step.CANCEL]
    assert s.phase is Phase.NONE and s.idle


def test_switching_from_a_ready_model_stops_it_then_loads_the_other() -> None:
    s = loaded()
    assert s.load(B) is Step.STOP
    assert s.phase is Phase.SWITCHING and s.next == B and s.busy
    assert s.load(B) is Step.NOTHING  # asked twice: one stop
    s.runner_state("stopping")
    assert s.phase is Phase.SWITCHING and s.endpoint is None
    assert s.runner_state("stopped") is Step.PLAN
    assert s.switch_target() == B and s.next is None and s.phase is Phase.NONE
    assert s.load(B) is Step.PLAN
    s.planning(B)
    s.planned()
    s.runner_state("ready", B_READY)
    assert s.endpoint == B_READY and s.path == B


def test_switching_while_loading_cancels_the_load_and_keeps_the_pins_for_the_next() -> None:
    s = ActiveState()
    s.planning(A)
    s.planned()
    s.runner_state("loading")
    pins = Pins(n_ctx=2048)
    assert s.load_with(A, pins) == [Step.CANCEL, Step.STOP]  # A itself loads again
    assert s.phase is Phase.SWITCHING and s.next == A
    assert s.load_with(A, pins) == [Step.CANCEL]  # already stopping: no second stop
    s.runner_state("stopping")
    assert s.runner_state("stopped") is Step.PLAN
    assert s.switch_target() == A
    assert s.take_pins() == pins and s.take_pins() is None  # the pins apply to one load


def test_applying_pins_while_planning_cancels_the_plan_and_plans_again() -> None:
    s = ActiveState()
    s.planning(A)
    assert s.load_with(A, Pins(n_ctx=4096)) == [Step.CANCEL, Step.PLAN]
    assert s.phase is Phase.NONE and s.load(A) is Step.PLAN
    idle = ActiveState()
    assert idle.load_with(A, None) == [Step.PLAN]


def test_a_runner_stopped_by_someone_else_unloads_then_restarts_loading() -> None:
    # Settings' "Apply now": the runner stops, then the loader starts the same plan again.
    s = loaded()
    s.runner_state("stopping")
    assert s.phase is Phase.UNLOADING
    s.runner_state("stopped")
    assert s.phase is Phase.NONE
    s.planned()
    s.runner_state("starting")
    assert s.phase is Phase.LOADING
    s.runner_state("ready", A_READY)
    assert s.phase is Phase.READY and s.endpoint == A_READY


def test_a_servers_model_is_checked_then_in_use_and_the_endpoint_is_the_servers() -> None:
    s = loaded()
    assert s.use_remote(BOX) and s.checking == BOX
    assert s.endpoint == A_READY  # the local model answers until the check is done
    assert not s.remote_ready(RemoteModel("box", "other"), BOX_AT)  # moved on meanwhile
    assert s.remote_ready(BOX, BOX_AT)
    assert s.checking is None and s.remote == BOX
    assert s.endpoint == BOX_AT and s.endpoint.is_remote
    assert s.model_in_use(A) == BOX.key
    assert not s.use_remote(BOX)  # in use already
    # The local runner stopping does not touch the server's endpoint.
    s.runner_state("stopping")
    s.runner_state("stopped")
    assert s.endpoint == BOX_AT and s.phase is Phase.NONE


def test_the_loaded_model_used_again_leaves_the_server_without_a_load() -> None:
    s = loaded()
    s.use_remote(BOX)
    s.remote_ready(BOX, BOX_AT)
    assert s.load(A) is Step.BACK
    assert s.remote is None and s.endpoint == A_READY and s.phase is Phase.READY


def test_planning_another_model_leaves_the_server() -> None:
    s = ActiveState()
    s.use_remote(BOX)
    s.remote_ready(BOX, BOX_AT)
    s.planning(A)
    assert s.remote is None and s.endpoint is None


def test_a_failed_check_keeps_what_was_in_use() -> None:
    s = loaded()
    s.use_remote(BOX)
    assert not s.remote_failed(RemoteModel("box", "other"))
    assert s.remote_failed(BOX)
    assert s.checking is None and s.remote is None and s.endpoint == A_READY


def test_the_servers_endpoint_follows_its_server_and_ends_with_it() -> None:
    s = loaded()
    s.use_remote(BOX)
    s.remote_ready(BOX, BOX_AT)
    moved = ChatEndpoint.remote("http://10.0.0.9/v1", "sk2", "qwen3", "Box", "http://10.0.0.9/v1")
    assert not s.server_changed(moved)
    assert s.endpoint == moved
    assert s.server_changed(None)  # removed: chats go back to the local model
    assert s.remote is None and s.endpoint == A_READY


def test_the_endpoint_is_decided_when_the_model_is_ready_not_per_request() -> None:
    s = loaded()
    first = s.endpoint
    s.planned()  # later news about the plan changes nothing about where replies go
    assert s.endpoint is first
    s.runner_state("ready", B_READY)  # a runner ready again is asked anew
    assert s.endpoint == B_READY
