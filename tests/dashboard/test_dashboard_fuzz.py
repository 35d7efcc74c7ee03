"""Random referee requests against the real LiveSession: a bad request is a 400, never a 500.

Bodies are drawn from what a broken client or a curious user might send: any JSON value,
objects of the real field names with values of any type, and new-match requests whose rule
options are real option names with values of any type and size. After every request the
pages the dashboard polls must still answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import scripted_live_session
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omweso_cam.rules import RuleSet

TOKEN = "fuzz-token"
HEADERS = {"X-Referee-Token": TOKEN, "Content-Type": "application/json"}
ACTIONS = ("/api/match", "/api/setup/confirm", "/api/alarm/board-restored", "/api/alarm/accept-observed",
           "/api/take-back", "/api/correct-pit", "/api/calibration")
FIELDS = ("south", "north", "rules", "options", "mode", "position", "square", "count", "corners_px")

numbers = st.one_of(st.integers(-100, 100), st.integers(-(10**30), 10**30), st.floats())
scalars = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=20))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=10), inner, max_size=4)),
                      max_leaves=10)
bodies = st.one_of(values, st.dictionaries(st.sampled_from(FIELDS), values, max_size=5))
new_matches = st.fixed_dictionaries(
    {"south": st.sampled_from(["Alice", ""]), "north": st.sampled_from(["Bongo", "\u0007"])},
    optional={"rules": st.sampled_from(["seed", "traditional", "chess"]),
              "mode": st.sampled_from(["classical", "blitz", "bullet"]),
              "options": st.dictionaries(st.sampled_from(RuleSet.option_names()), st.one_of(numbers, values),
                                         max_size=3)},
)


@pytest.fixture(scope="module")
def client() -> Iterator[FlaskClient]:
    with scripted_live_session(TOKEN) as (_session, _source, client):
        yield client


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(requests=st.lists(st.tuples(st.sampled_from(ACTIONS), st.one_of(new_matches, bodies)), min_size=1, max_size=5))
def test_no_request_body_breaks_the_server(client: FlaskClient, requests: list[tuple[str, Any]]) -> None:
    for path, body in requests:
        reply = client.post(path, data=json.dumps(body), headers=HEADERS)
        assert reply.status_code in (200, 400), (path, body, reply.status_code, reply.get_data(as_text=True)[:300])
        assert reply.is_json and (reply.status_code == 200 or reply.json["error"])
        for page in ("/api/state", "/api/matches"):
            assert client.get(page).status_code == 200, (path, body, page)
