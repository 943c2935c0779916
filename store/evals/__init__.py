"""Evaluations of the store on public benchmarks (clients of the facade, like ``store.bench``):
``locomo`` measures evidence recall on LoCoMo's long multi-session conversations."""
