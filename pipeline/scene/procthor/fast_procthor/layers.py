"""The rooms' light layers: no SAT solver for a house whose rooms have no neighbours (item 10 of the package docstring)."""

from __future__ import annotations

import networkx as nx
import procthor.generation.layer as layer

STOCK_FOUR_COLOR_GRAPH = layer.four_color_graph


def four_color_graph(graph: nx.Graph) -> dict:
    """`layer.four_color_graph`: {} for a graph of no rooms, as stock finds it.

    Stock gives each node four variables and asks a new Glucose3 solver for a model, whose
    positive variables colour the nodes. With no node there is no variable and no clause: the
    model is empty and so is the colouring. A one-room house's graph has no node (a room's
    walls meet only the exterior, which is left out), so this is every house here.
    """
    if graph.number_of_nodes() == 0:
        return {}
    return STOCK_FOUR_COLOR_GRAPH(graph)
