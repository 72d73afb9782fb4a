//! The real-network runtime of joulenet: the same sans-IO protocol agents
//! that the simulator runs, driven by real clocks and UDP sockets.
//!
//! What it is for: moving real bytes between real hosts with any joulenet
//! protocol — iperf3-style measurement ([`client`], [`server`]), verified file
//! transfer ([`app::FileSource`], [`app::FileSink`]), a user-space link
//! emulator applying the simulator's loss models ([`emulate`]) — and reporting
//! the same metrics as a simulation, including an energy estimate from the
//! simulator's radio model ([`energy`]).
//!
//! How: [`net::RuntimeNet`] implements `joulenet_proto::Net` for one
//! connection (monotonic ns since the connection's start, the agent's own timer
//! table, an OS-seeded PCG stream, a queue of packets to send); a
//! [`conn::Connection`] pairs it with an agent; the client and server event
//! loops move framed datagrams ([`frame`]) with batched socket I/O ([`sock`]).
//! Protocol code is used unchanged.
//!
//! What it must not depend on: the simulator (`joulenet-sim`) or anything
//! that needs it. It depends on `joulenet-proto` (agents, `Net`),
//! `joulenet-channel` (loss and radio models), libc (poll, recvmmsg,
//! sendmmsg), sha2 and hmac (file hashes, address-validation
//! tokens), chacha20poly1305 and hkdf (authenticated mode, [`seal`]),
//! serde and rand.

pub mod app;
pub mod client;
pub mod conn;
pub mod emulate;
pub mod energy;
pub mod frame;
pub mod link_loss;
pub mod multihomed;
pub mod net;
pub mod pace;
pub mod partial;
pub mod relay;
pub mod report;
pub mod resume;
pub mod route;
pub mod routes;
pub mod seal;
pub mod server;
pub mod signals;
pub mod sock;
pub mod token;
pub mod wake;

pub use client::{run_client, ClientApp, ClientOptions};
pub use emulate::{parse_loss, run_emulator, EmulateOptions};
pub use report::{Format, Summary};
pub use server::{run_server, ServerMode, ServerOptions, ServerReport};
