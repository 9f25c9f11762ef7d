"""CDATA sections inside parameter values: ``<![CDATA[`` opens, ``]]>`` closes.

The open is a marker a raw value listens for when its style says ``cdata``; the close is
recognised by the CDATA region's own states (``in_cdata`` → ``cdata_rb`` →
``cdata_rbrb``), since ``]`` may repeat inside it.
"""

from __future__ import annotations

from callsieve.grammar.api import Marker

CDATA_OPEN = Marker(r"<!\[CDATA\[", ("<![CDATA[",), "<![CDATA[")
