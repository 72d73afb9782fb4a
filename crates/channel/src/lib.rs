//! Channel loss models and radio energy models.
//!
//! Shared by the simulator (which drives them with simulated time) and the
//! real-network runtime (its user-space link emulator and energy estimate).
//! Must not depend on the simulator, the runtime, or any I/O.
