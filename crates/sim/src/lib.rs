//! The joulenet discrete-event simulator.
