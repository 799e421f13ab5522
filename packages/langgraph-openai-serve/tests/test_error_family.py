"""The error family drawn in ``openai/errors.py``'s docstring is the one the
library has: each class where its bases put it, each mapped class with the
status, code and param of its row in the envelope table."""

from __future__ import annotations

import re

import psycopg
import psycopg_pool
from fastapi.exceptions import RequestValidationError
from langgraph_openai_serve.batches import errors as batches
from langgraph_openai_serve.conversations import errors as conversations
from langgraph_openai_serve.graph import errors as graph
from langgraph_openai_serve.graph.errors import LGOSError
from langgraph_openai_serve.openai import errors
from langgraph_openai_serve.operations.admission import LimitReached
from langgraph_openai_serve.operations.outages import DatabaseTimeout
from langgraph_openai_serve.responses import errors as responses
from starlette.exceptions import HTTPException

_BRANCH = re.compile(r"[├└]── ([A-Z]\w*)(.*)")
# Mapped by the handlers themselves rather than by a table row.
_HANDLED = (
    RequestValidationError,
    HTTPException,
    psycopg_pool.PoolTimeout,
    psycopg.OperationalError,
    psycopg.InterfaceError,
    DatabaseTimeout,
    LimitReached,
)


def _lgos_errors() -> set[type[Exception]]:
    return {
        value
        for module in (graph, responses, batches, conversations)
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, LGOSError)
        and value.__module__ == module.__name__
    }


def _drawing() -> tuple[dict[str, str], dict[str, str]]:
    """Each drawn class's row text (continuation lines joined) and the name
    of the class it is drawn under."""
    rows: dict[str, str] = {}
    parents: dict[str, str] = {}
    stack = ["Exception"]  # the drawn ancestors of the current row, by depth
    assert errors.__doc__ is not None
    tree = [line for line in errors.__doc__.splitlines() if line.startswith("    ")]
    assert tree[0].strip() == "Exception"
    name = "Exception"  # the row a line without a branch continues
    for line in tree[1:]:
        branch = _BRANCH.search(line)
        if branch is None:  # no class: "any other exception", or a row going on
            if "── " not in line:
                rows[name] += " " + line.strip(" │")
            continue
        name, depth = branch.group(1), branch.start() // 4
        del stack[depth:]
        parents[name] = stack[-1]
        stack.append(name)
        rows[name] = branch.group(2)
    return rows, parents


def test_the_drawing_names_each_lgos_and_mapped_error_and_no_other():
    rows, _ = _drawing()
    expected = _lgos_errors() | set(errors._TABLE) | set(errors._SERVER_TABLE)
    assert set(rows) == {cls.__name__ for cls in (*expected, *_HANDLED)}


def test_each_drawn_row_shows_its_table_status_code_and_param():
    rows, _ = _drawing()
    for cls, envelope in {**errors._TABLE, **errors._SERVER_TABLE}.items():
        row = rows[cls.__name__]
        assert re.search(rf"\b{envelope.status} {envelope.code}\b", row), cls
        if envelope.param is None:
            assert "[" not in row, cls
        else:
            assert f"[{envelope.param}]" in row, cls


def test_each_class_is_drawn_under_its_nearest_drawn_base():
    rows, parents = _drawing()
    for cls in (*_lgos_errors(), *errors._TABLE, *errors._SERVER_TABLE, *_HANDLED):
        nearest = next(
            base.__name__
            for base in cls.__mro__[1:]
            if base.__name__ in rows or base is Exception
        )
        assert parents[cls.__name__] == nearest, cls
