"""The demo's guided tour, a capability of the store like any other: the steps (``steps``:
what each says, which record it points at, from the store as it is now), where the tour was
left (a note beside the demo store, never in it) and the demo's marker (``marker``: whether a
store is the demo's own file, the one the tour may run on). It imports ``store.core`` only;
``store.demo`` (which builds the demo, on top of the facade) writes the marker through it, and
the facade hands the operations out (``Store.tour_step``, ``tour_position``,
``remember_tour_position``, ``demo_refusal``)."""
