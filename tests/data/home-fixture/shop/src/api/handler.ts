export function get_order(id: string) { return id; }
