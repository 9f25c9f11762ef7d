"""The engine's region models joined into one class, the base of every composed model.

The composer (``callsieve.machine``) makes a machine's model at run time, from the
dialects' own region models (if any) and this class: ``type("Model", (*mixins,
EngineModel), guards and actions it generates)``. Declaring the engine's part here, once,
lets the compiled build (mypyc, ``CALLSIEVE_COMPILE=1``) compile it as one native class
over the region traits, so the guards and actions the runner calls per character run
compiled; the composed class on top stays an ordinary Python class (a dialect's mixins,
the generated guards, ``transitions`` adding its methods to the instance). Pure Python,
it is the same multiple inheritance the composer used to spell out.
"""

from __future__ import annotations

from callsieve.native import mypyc_attr
from callsieve.regions.cdata import CdataModel
from callsieve.regions.header import HeaderModel
from callsieve.regions.json_body import JsonBodyExtras
from callsieve.regions.json_value import JsonModel
from callsieve.regions.prose import ProseModel
from callsieve.regions.python_value import PythonValueExtras
from callsieve.regions.reasoning import ReasoningModel
from callsieve.regions.start import StartModel


@mypyc_attr(allow_interpreted_subclasses=True)
class EngineModel(ProseModel, ReasoningModel, CdataModel, JsonModel, JsonBodyExtras, PythonValueExtras, HeaderModel,
                  StartModel):
    """Every engine region's guards and actions (no dialect's: the engine names none)."""


#: The engine's region models, in the order EngineModel joins them.
ENGINE_MODELS: tuple[type, ...] = (ProseModel, ReasoningModel, CdataModel, JsonModel, JsonBodyExtras, PythonValueExtras,
                                   HeaderModel, StartModel)
