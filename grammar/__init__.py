"""The dialects callsieve understands, and the API for teaching it new ones."""

from callsieve.grammar.api import Dialect, Kind, Marker, ValueStyle, validate
from callsieve.grammar.registry import REGISTRY, resolve

__all__ = ["Dialect", "Kind", "Marker", "ValueStyle", "validate", "REGISTRY", "resolve"]
