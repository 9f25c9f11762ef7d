"""The dialects callsieve understands, and the API for teaching it new ones."""

from grammar.api import Dialect, Kind, Marker, ValueStyle, validate
from grammar.registry import REGISTRY, resolve

__all__ = ["Dialect", "Kind", "Marker", "ValueStyle", "validate", "REGISTRY", "resolve"]
