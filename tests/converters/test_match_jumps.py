"""break / continue / return inside `match` cases are lowered like those inside `if`s."""

import pytest

import autograph as ag


def classify(xs):
    total = 0
    for x in xs:
        match x:
            case 1:
                continue
            case 7:
                break
            case 9:
                return -1
            case [a, b]:
                total += a * b
            case _:
                total += x
    return total


def first_match(xs):
    for x in xs:
        match x:
            case int(n) if n > 2:
                return n
    return None


@pytest.mark.parametrize("fn", [classify, first_match])
@pytest.mark.parametrize("xs", [[1, 2, 3, 1, 4], [2, 7, 5], [2, 9, 4], [], [[2, 3], 4], [0, 5]])
def test_converted_matches_python(fn, xs):
    assert ag.to_graph(fn)(xs) == fn(xs)


def test_no_jump_is_left_inside_a_loop_body_function():
    lines = [line.strip() for line in ag.to_code(classify).splitlines()]
    assert "continue" not in lines and "break" not in lines
    assert "return -1" not in lines and "retval_ = -1" in lines
