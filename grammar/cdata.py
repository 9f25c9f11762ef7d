"""CDATA sections inside parameter values: ``<![CDATA[`` opens, ``]]>`` closes.

The open is a marker; the close is recognised by the machine's own states
(``in_cdata`` → ``cdata_rb`` → ``cdata_rbrb``), since ``]`` may repeat inside it.
"""

from __future__ import annotations

from callsieve.grammar.api import Kind, Marker

CDATA_OPEN = Marker(Kind.CDATA_OPEN, r"<!\[CDATA\[", ("<![CDATA[",), "<![CDATA[")

