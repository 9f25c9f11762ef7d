"""DeepSeek DSML: V3.2 ``function_calls`` and V4 ``tool_calls`` blocks, and leaked variants.

Wire format (shared/reference/dialects.md §1)::

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="get_weather">
    <｜DSML｜parameter name="location" string="true">杭州</｜DSML｜parameter>
    <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

Bars are any run of U+FF5C ``｜``, ASCII ``|`` or U+2016 ``‖`` (seed 001 shows ``‖``),
with optional spaces around ``DSML`` and before the tag name; ``EPSE`` is accepted where
``DSML`` is (the hybrid close seen leaking). Block names: ``function_calls``,
``tool_calls``, ``calls`` (and ``tool-calls``, ``toolcalls``). ``string="true"`` values
are raw text, ``string="false"`` values are JSON; CDATA values are raw. An ``invoke``
without its block (seen when V4 falls back to text) is read as a block of its own.

Tolerated (dialects.md §1, §10; each with its Diagnostic, none under ``strict``):

- ``dsml_variant``: a misspelt prefix: bars of any length (five and more), a space,
  nothing, a ``-``, U+2402 or a raw U+0002 where a bar belongs, a trailing bar before
  ``>``, ``DSML`` repeated, hyphenated or run-together block names (``function-calls``,
  ``toolcall``, ``<dsml-tool-calls>``);
- ``missing_block_open``: invokes without their block (ended where the grammar stops,
  or by a block close after them: the opening wrapper lost); with ``tools=``, every
  call must name a known tool, else it stays text;
- ``implied_call_close``: ``</invoke>`` left out before the next invoke or the block
  close;
- ``unwrapped_arguments``: every argument wrapped in one ``arguments`` parameter;
- ``doubled_lt``: a ``<`` written twice before a DSML marker (``<<｜DSML｜tool_calls>``),
  a ``Prefix`` of every DSML marker but a value's close;
- ``json_invoke_body``: an invoke whose arguments are one JSON object instead of
  parameters (ds2api, SGLang);
- ``dsml_variant`` also: ``<｜tool_calls>`` (a bar, no ``DSML``) and a block tag ending in
  bars with no ``>`` before a space or a line break (``<｜DSML｜tool_calls｜``);
- ``mixed_tags``: plain XML tags (``<invoke>``, ``</parameter>``, ...) inside a block a
  DSML opener opened (ds2api);
- ``arbitrary_prefix``: another word where ``DSML`` belongs (``<｜FOO｜tool_calls>``),
  only when the same word is on every tag of the block (``Block(same=True)``).

The markers are not single special tokens, but vLLM forces
``skip_special_tokens=False`` for them all the same; serve with it.
"""

from __future__ import annotations

from dataclasses import replace

from callsieve.grammar.api import (Alt, Block, Call, Choose, Dialect, JsonArgs, JsonValue, Many, Marker, Opt, Param, Prefix, Raw,
                                   ValueStyle, Variant)
from callsieve.grammar.reasoning import THINK
from callsieve.grammar.tags import ATTRS, END, GT, LT, close_tag, open_tag

BARS = "[\uff5c|\u2016]{1,4}"
PREFIX = rf"\s{{0,4}}{BARS}\s{{0,4}}(?i:DSML|EPSE)\s{{0,4}}{BARS}\s{{0,4}}"
BLOCK = "(?i:function_calls|tool_calls|tool-calls|toolcalls|calls)"

#: The tolerated spelling (``dsml_variant``): bars of any length or none, ``DSML``
#: repeated, a trailing bar before ``>``, block names hyphenated or run together; where
#: a bar belongs, also a ``-`` (``<dsml-tool-calls>``), U+2402 ``␂`` or a raw U+0002
#: (ds2api's leaked separators).
_ANY_BARS = "[\uff5c|\u2016\\-\u2402\x02]{0,16}"
LENIENT_PREFIX = rf"\s{{0,4}}{_ANY_BARS}\s{{0,4}}(?:(?i:DSML|EPSE)\s{{0,4}}{_ANY_BARS}\s{{0,4}}){{1,3}}"
LENIENT_BLOCK = "(?i:(?:function|tool)[_-]?calls?|calls)"
LENIENT_END = rf"\s{{0,8}}{_ANY_BARS}\s{{0,8}}{GT}"

#: Bar spellings the examples (and so the property tests) cover.
BAR_VARIANTS = ("\uff5c", "|", "\u2016", "\uff5c\uff5c", "||", "\u2016\u2016")
BLOCK_NAMES = ("function_calls", "tool_calls", "calls")


def _tag(bar: str, name: str, close: bool = False, space: str = "", lt: str = "<") -> str:
    return f"{lt}{'/' if close else ''}{bar}DSML{bar}{space}{name}"


def _examples(name: str, close: bool, attrs: str = "") -> tuple[str, ...]:
    out = []
    for bar in BAR_VARIANTS:
        for space in ("", " "):
            out.append(_tag(bar, name, close, space) + attrs + ">")
    out.append(_tag("\uff5c", name, close, "", "\uff1c") + attrs + ">")
    return tuple(out)


def _block_examples(close: bool) -> tuple[str, ...]:
    return tuple(e for b in BLOCK_NAMES for e in _examples(b, close))


def _variant_examples(name: str, close: bool, attrs: str = "") -> tuple[str, ...]:
    slash = "/" if close else ""
    return (
        f"<{slash}{'｜' * 5}DSML{'｜' * 5}{name}{attrs}>",  # five bars
        f"<{slash}|||||||DSML|||||||{name}{attrs}>",
        f"<{slash}DSML {name}{attrs}>",  # a space where a bar belongs
        f"<{slash}｜DSML {name}{attrs}>",
        f"<{slash}DSML｜{name}{attrs}>",  # nothing where a bar belongs
        f"<{slash}｜DSML｜{name}{attrs}｜>",  # a trailing bar
        f"<{slash}｜DSML｜DSML｜{name}{attrs}>",  # DSML repeated
        f"<{slash}dsml-{name.replace('_', '-')}{attrs}>",  # a hyphen where the bar belongs
        f"<{slash}-DSML-{name}{attrs}>",
        f"<{slash}\u2402DSML\u2402{name}{attrs}>",  # U+2402 as the separator
        f"<{slash}\x02DSML\x02{name}{attrs}>",  # a raw U+0002
    )


def _variant(name_re: str, name: str, close: bool, attrs_re: str = "", attrs: str = "", extra: tuple[str, ...] = ()) -> Variant:
    slash = "/" if close else ""
    return Variant(
        f"{LT}{slash}{LENIENT_PREFIX}{name_re}{attrs_re}{LENIENT_END}",
        _variant_examples(name, close, attrs) + extra,
        "dsml_variant",
        f"<{slash}~DSML~{name}{attrs and ' …'}>",
    )


#: Tolerated (ds2api's "repeated ``<<``"): a ``<`` written twice before a DSML marker;
#: the stray one is markup, reported. Not before a value's close: a ``<`` there is the
#: value's last character (``a<</｜DSML｜parameter>`` is the value ``a<``).
DOUBLED_LT = Prefix(LT, ("<", "\uff1c"), "doubled_lt")

_HYPHENATED = ("function-calls", "functioncalls", "tool_call")


def _wrapper_variants(close: bool) -> tuple[Variant, ...]:
    """The block's own tag's leaked spellings, beyond ``_variant``'s (``dsml_variant``):
    a bar and no ``DSML`` (``<｜tool_calls>``, ds2api), and the tag ending in bars with
    no ``>`` (``<｜DSML｜tool_calls｜``), read only where a space or a line break follows
    the bars (taken with them: a bar alone, before ``>``, is the trailing bar)."""
    slash = "/" if close else ""
    bars = "[\uff5c|\u2016]{1,16}"
    return (
        # (the block names as written, no trailing bar: ``<|tool_call|>``, ``<|tool_call>``
        # and ``<|function_call|>`` are other dialects' tokens)
        Variant(f"{LT}{slash}\\s{{0,4}}{bars}\\s{{0,4}}{BLOCK}{END}",
                (f"<{slash}｜tool_calls>", f"<{slash}|tool_calls>", f"<{slash}｜｜ function_calls>"), "dsml_variant",
                f"<{slash}｜tool_calls>"),
        Variant(f"{LT}{slash}{LENIENT_PREFIX}{LENIENT_BLOCK}\\s{{0,8}}{bars}[ \\t\\r\\n]",
                (f"<{slash}｜DSML｜tool_calls｜\n", f"<{slash}|DSML|tool_calls| ", f"<{slash}｜DSML｜function_calls ｜｜\r"),
                "dsml_variant", f"<{slash}｜DSML｜tool_calls｜"),
    )


BLOCK_OPEN = Marker(
    f"{LT}{PREFIX}{BLOCK}{END}", _block_examples(False), "<｜DSML｜function_calls>",
    variants=(_variant(LENIENT_BLOCK, "tool_calls", False, extra=tuple(f"<｜DSML｜{b}>" for b in _HYPHENATED)),
              *_wrapper_variants(False)),
    prefixes=(DOUBLED_LT,),
)
BLOCK_CLOSE = Marker(
    f"{LT}/{PREFIX}{BLOCK}{END}", _block_examples(True), "</｜DSML｜function_calls>",
    variants=(_variant(LENIENT_BLOCK, "tool_calls", True, extra=tuple(f"</｜DSML｜{b}>" for b in _HYPHENATED)),
              *_wrapper_variants(True)),
    prefixes=(DOUBLED_LT,),
)
INVOKE = Marker(
    f"{LT}{PREFIX}(?i:invoke){ATTRS}{END}", _examples("invoke", False, ' name="f"'), '<｜DSML｜invoke name="…">',
    variants=(_variant("(?i:invoke)", "invoke", False, ATTRS, ' name="f"'),),
    prefixes=(DOUBLED_LT,),
)
INVOKE_END = Marker(
    f"{LT}/{PREFIX}(?i:invoke){END}", _examples("invoke", True), "</｜DSML｜invoke>",
    variants=(_variant("(?i:invoke)", "invoke", True),),
    prefixes=(DOUBLED_LT,),
)
PARAMETER = Marker(
    f"{LT}{PREFIX}(?i:parameter){ATTRS}{END}",
    _examples("parameter", False, ' name="k" string="true"') + _examples("parameter", False, ' name="k" string="false"'),
    '<｜DSML｜parameter name="…" string="…">',
    variants=(_variant("(?i:parameter)", "parameter", False, ATTRS, ' name="k" string="true"'),),
    prefixes=(DOUBLED_LT,),
)
PARAMETER_END = Marker(
    f"{LT}/{PREFIX}(?i:parameter){END}", _examples("parameter", True), "</｜DSML｜parameter>",
    variants=(_variant("(?i:parameter)", "parameter", True),),
)

#: ``string="false"``: the value is JSON; anything else (``"true"``, absent): raw text,
#: CDATA allowed.
VALUE = Choose("string", (("false", JsonValue(PARAMETER_END)),), Raw(PARAMETER_END, ValueStyle(cdata=True)))
#: Tolerated (ds2api, SGLang): the arguments written as one JSON object where the
#: parameters belong, ``<｜DSML｜invoke name="f">{"city": "Paris"}</｜DSML｜invoke>``.
JSON_BODY = Opt(JsonArgs(), stray="json_invoke_body")
INVOKES = Call(INVOKE, Alt(Many(Param(PARAMETER, VALUE)), JSON_BODY), close=INVOKE_END, implied_close="implied_call_close",
               wrapped=("arguments", "parameters"), repeated="repeated_param_array")


#: Tolerated (ds2api's "arbitrary alphanumeric prefixes such as ``EPSE|``"): another word
#: where ``DSML`` belongs, ``<｜FOO｜invoke …>`` (``arbitrary_prefix``), only where the same
#: word is on every tag of the block (``Block(same=True)``: the word is the ``same``
#: group, read at the block's opener; a tag with another word, or none, is no marker of
#: that block).
_WORD = r"(?P<same>[A-Za-z][A-Za-z0-9]{0,15})"


def _arbitrary(name_re: str, name: str, close: bool, attrs_re: str = "", attrs: str = "") -> Variant:
    slash = "/" if close else ""
    bars = "[\uff5c|\u2016]{1,16}"
    return Variant(f"{LT}{slash}\\s{{0,4}}{bars}\\s{{0,4}}{_WORD}\\s{{0,4}}{bars}\\s{{0,4}}{name_re}{attrs_re}{END}",
                   (f"<{slash}｜FOO｜{name}{attrs}>", f"<{slash}|Ab1|{name}{attrs}>"), "arbitrary_prefix",
                   f"<{slash}｜?｜{name}{attrs and ' …'}>")


def _with_arbitrary(m: Marker, name_re: str, name: str, close: bool, attrs_re: str = "", attrs: str = "") -> Marker:
    return replace(m, variants=m.variants + (_arbitrary(name_re, name, close, attrs_re, attrs),))


def _mixed(m: Marker, plain: str, examples: tuple[str, ...]) -> Marker:
    """``m``, and read as it, its plain XML spelling (``mixed_tags``, ds2api normalizes
    both to it): inside a block its DSML opener opened, never as an opener in prose
    (a plain ``<invoke>`` there is the gateway XML dialect's, or text)."""
    return replace(m, variants=m.variants + (Variant(plain, examples, "mixed_tags", f"{examples[0]} ~mixed"),))


#: Tolerated (ds2api): DSML and plain XML tags mixed in one block (a model drifting from
#: ``<｜DSML｜invoke>`` to ``<invoke>``, or ``<｜tool_calls>`` around plain invokes):
#: inside a block its DSML (or leaked) opener opened, each plain tag is read as the DSML
#: one (``mixed_tags``).
PARAMETER_END_MIXED = _with_arbitrary(_mixed(PARAMETER_END, close_tag("parameter"), ("</parameter>",)),
                                      "(?i:parameter)", "parameter", True)
INVOKES_MIXED = Call(
    _with_arbitrary(_mixed(INVOKE, open_tag("invoke"), ('<invoke name="f">',)), "(?i:invoke)", "invoke", False, ATTRS,
                    ' name="f"'),
    Alt(Many(Param(
        _with_arbitrary(_mixed(PARAMETER, open_tag("parameter"), ('<parameter name="k" string="true">', '<parameter name="k">')),
                        "(?i:parameter)", "parameter", False, ATTRS, ' name="k" string="true"'),
        Choose("string", (("false", JsonValue(PARAMETER_END_MIXED)),), Raw(PARAMETER_END_MIXED, ValueStyle(cdata=True))),
    )), JSON_BODY),
    close=_with_arbitrary(_mixed(INVOKE_END, close_tag("invoke"), ("</invoke>",)), "(?i:invoke)", "invoke", True),
    implied_close="implied_call_close", wrapped=("arguments", "parameters"), repeated="repeated_param_array",
)
BLOCK_CLOSE_MIXED = _with_arbitrary(_mixed(BLOCK_CLOSE, close_tag(BLOCK), ("</tool_calls>", "</function_calls>")),
                                    BLOCK, "tool_calls", True)
BLOCK_OPEN_ANY = _with_arbitrary(BLOCK_OPEN, BLOCK, "tool_calls", False)

BLOCKS = (
    # (missing_block_close: the stream ends after </｜DSML｜invoke> with no block close)
    Block(BLOCK_OPEN_ANY, Many(INVOKES_MIXED, min=1), BLOCK_CLOSE_MIXED, eof_close="missing_block_close", same=True),
    # An invoke standing in prose without its block (V4 falling back to text,
    # sglang#40236): an implied block that ends, complete, where the grammar stops; a
    # block close after its invokes means the opening wrapper was lost.
    Block(None, Many(INVOKES, min=1), BLOCK_CLOSE, close_optional=True, name="bare", tolerance="missing_block_open"),
)


def render(calls: list[tuple[str, list[tuple[str, str, bool]]]], variant: int = 0) -> str:
    """A well-formed block; ``variant`` picks the bar spelling, spacing and block name.
    (Invokes without their block are a tolerance, ``missing_block_open``: the
    tolerance properties leave the block's markers out of these.)"""
    bar = BAR_VARIANTS[variant % len(BAR_VARIANTS)]
    space = " " if (variant // len(BAR_VARIANTS)) % 2 else ""
    block = BLOCK_NAMES[(variant // (2 * len(BAR_VARIANTS))) % len(BLOCK_NAMES)]
    bare = False
    lines = [] if bare else [_tag(bar, block, False, space) + ">"]
    for name, params in calls:
        lines.append(_tag(bar, "invoke", False, space) + f' name="{name}">')
        for key, value, is_json in params:
            flag = "false" if is_json else "true"
            lines.append(
                _tag(bar, "parameter", False, space) + f' name="{key}" string="{flag}">'
                + value + _tag(bar, "parameter", True, space) + ">"
            )
        lines.append(_tag(bar, "invoke", True, space) + ">")
    if not bare:
        lines.append(_tag(bar, block, True, space) + ">")
    return "\n".join(lines)


DIALECT = Dialect(
    name="dsml",
    title="DeepSeek DSML (V3.2 function_calls, V4 tool_calls)",
    blocks=BLOCKS,
    reasoning=(THINK,),
    sample=render([("get_weather", [("location", "杭州", False), ("days", "3", True)])]),
    render=render,
)
