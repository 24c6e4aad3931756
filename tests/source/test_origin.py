import json

import pytest

from autograph.source import loader, origin, parser


def where_am_i():
    return origin.user_location()


def calls_helper(probe):
    x = probe()
    return x


def test_user_location_finds_innermost_generated_frame():
    node, _, _ = parser.parse_entity(calls_helper)
    new, _, _ = loader.load(node, calls_helper, {})
    loc = new(where_am_i)
    assert loc.filename == __file__ and loc.lineno == calls_helper.__code__.co_firstlineno + 1
    assert loc.source_line.strip() == "x = probe()" and loc.function_name == "calls_helper"
    assert origin.user_location() is None  # not inside converted code
    assert "x = probe()" in loc.format() and str(loc) == f"{__file__}:{loc.lineno}"


def raises_inside(x):
    y = x[10]
    return y


def test_rewrite_keeps_plain_exceptions_unchanged():
    try:
        raise KeyError("k")
    except KeyError as e:
        assert origin.rewrite_traceback(e) is e and not getattr(e, "__notes__", None)


def test_internal_frames_are_hidden_user_helper_frames_kept():
    node, _, _ = parser.parse_entity(raises_inside)
    new, _, filename = loader.load(node, raises_inside, {})
    with pytest.raises(IndexError) as info:
        with origin.user_frames():
            new([1])
    tb = info.value.__traceback__
    files = []
    while tb is not None:
        files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    assert filename in files
    assert not any(f.endswith("autograph/source/origin.py") for f in files)
    assert f"line {raises_inside.__code__.co_firstlineno + 1}, in raises_inside" in info.value.__notes__[-1]


def test_boundary_decorator_strips_frames_between_it_and_the_error():
    node, _, _ = parser.parse_entity(raises_inside)
    new, _, filename = loader.load(node, raises_inside, {})

    @origin.boundary
    def entry_point(arg):
        return new(arg)

    with pytest.raises(IndexError) as info:
        entry_point([1])
    tb, names = info.value.__traceback__, []
    while tb is not None:
        names.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    # the wrapped entry point is kept (it is test code, not autograph's); the note is there
    assert "entry_point" in names and names[-1] == "raises_inside"
    assert "api_boundary" not in names  # a bare re-raise adds no entry for its own frame
    assert "in raises_inside" in info.value.__notes__[-1]


def helper_parses(text):
    return json.loads(text)  # the error is raised inside the standard library


def calls_helper_with(text):
    data = helper_parses(text)
    return data


def test_note_lists_user_helpers_but_not_library_frames():
    node, _, _ = parser.parse_entity(calls_helper_with)
    new, _, _ = loader.load(node, calls_helper_with, {})
    with pytest.raises(json.JSONDecodeError) as info:
        with origin.user_frames():
            new("{")
    tb, files = info.value.__traceback__, []
    while tb is not None:
        files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    assert any(f.endswith("json/decoder.py") for f in files)  # the traceback keeps them
    note = info.value.__notes__[-1]
    assert "data = helper_parses(text)" in note and "return json.loads(text)" in note
    assert "decoder.py" not in note and "__init__.py" not in note


def reraises(d):
    try:
        return d["missing"]
    except KeyError as e:
        raise ValueError("no value") from e


def test_chained_exceptions_lose_internal_frames_too():
    node, _, _ = parser.parse_entity(reraises)
    new, _, filename = loader.load(node, reraises, {})

    @origin.boundary
    def entry(d):
        return new(d)
    with pytest.raises(ValueError) as info:
        entry({})
    cause = info.value.__cause__
    assert isinstance(cause, KeyError)
    tb, files = cause.__traceback__, []
    while tb is not None:
        files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    assert files == [filename]
    assert "return d['missing']" not in info.value.__notes__[-1]  # the note is about the ValueError
    assert 'raise ValueError("no value") from e' in info.value.__notes__[-1]


def calls_internal(probe):
    result = probe(len)  # parse_entity(len) raises ConversionError inside autograph
    return result


def test_autograph_errors_end_at_the_generated_frame():
    from autograph import errors
    node, _, _ = parser.parse_entity(calls_internal)
    new, _, filename = loader.load(node, calls_internal, {})
    with pytest.raises(errors.ConversionError) as info:
        with origin.user_frames():
            new(parser.parse_entity)
    tb, files = info.value.__traceback__, []
    while tb is not None:
        files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    assert files[-1] == filename  # the raising autograph frame is dropped too
    assert "result = probe(len)" in info.value.__notes__[-1]
