"""The dialects callsieve understands, and the API for teaching it new ones.

Pure data: nothing here imports the engine. ``api`` holds the structure vocabulary
(markers, blocks, calls, parameters, value bodies), ``states`` the vocabulary of states
and transitions a dialect's own region is written in, ``registry`` the built-in
dialects by name (and ``register`` for yours).
"""

from callsieve.grammar.api import (
    Alt,
    Block,
    Body,
    Call,
    Capture,
    Choose,
    Dialect,
    Header,
    HeaderCase,
    JsonArgs,
    JsonCall,
    JsonCalls,
    JsonValue,
    Many,
    Marker,
    MAX_TAG_CHARS,
    Opt,
    Param,
    Prefix,
    PythonCall,
    PythonCalls,
    Raw,
    Reasoning,
    Seq,
    ValueStyle,
    Variant,
    arguments_of,
    validate,
)
from callsieve.grammar.errors import GrammarError, UnknownDialectError
from callsieve.grammar.registry import ALIASES, REGISTRY, register, resolve
from callsieve.grammar.states import Region

__all__ = [
    "Alt",
    "Block",
    "Body",
    "Call",
    "Capture",
    "Choose",
    "Dialect",
    "Header",
    "HeaderCase",
    "JsonArgs",
    "JsonCall",
    "JsonCalls",
    "JsonValue",
    "Many",
    "Marker",
    "MAX_TAG_CHARS",
    "Opt",
    "Param",
    "Prefix",
    "PythonCall",
    "PythonCalls",
    "Raw",
    "Reasoning",
    "Seq",
    "ValueStyle",
    "Variant",
    "arguments_of",
    "validate",
    "Region",
    "GrammarError",
    "UnknownDialectError",
    "ALIASES",
    "REGISTRY",
    "register",
    "resolve",
]
