//! The real-network commands: `serve`, `client`, `send`, `recv`, `emulate`.
//! Argument parsing only; the work is in `joulenet-runtime`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::Args;
use joulenet_channel::units::{parse_duration, parse_rate, parse_size};
use joulenet_proto::Duration;
use joulenet_runtime::app::{FileOutcome, Limit};
use joulenet_runtime::conn::Tuning;
use joulenet_runtime::frame::Protocol;
use joulenet_runtime::seal::{self, Psk};
use joulenet_runtime::{
    emulate, emulate::parse_probability, parse_loss, run_client, run_emulator, run_server, server,
    signals, ClientApp, ClientOptions, EmulateOptions, Format, ServerMode, ServerOptions,
};

pub fn dur(s: &str) -> Result<Duration, String> {
    parse_duration(s).map_err(|e| e.to_string())
}

/// `--link-rate`: a rate above zero, or none.
pub fn link_rate(s: Option<&str>) -> Result<Option<u64>, String> {
    let Some(s) = s else { return Ok(None) };
    match parse_rate(s) {
        Ok(0) => Err("--link-rate: must be above 0".into()),
        Ok(r) => Ok(Some(r)),
        Err(e) => Err(format!("--link-rate: {e}")),
    }
}

/// Options shared by every endpoint command.
#[derive(Args, Clone)]
pub struct Common {
    /// Seconds between interval reports (0: none)
    #[arg(short = 'i', long, default_value = "1")]
    pub interval: String,
    /// One JSON document at the end, laid out like iperf3's (start, intervals, end)
    #[arg(short = 'J', long)]
    pub json: bool,
    /// One JSON object per line as events happen (start, interval, end)
    #[arg(long, conflicts_with = "json")]
    pub json_stream: bool,
    /// Radio preset for the energy estimate (wavelan, 80211b, ns3-wifi)
    #[arg(long, default_value = "80211b")]
    pub radio: String,
    /// Radio bit rate for the energy estimate's airtime (802.11b's highest, 11 Mbit/s, by default)
    #[arg(long, default_value = "11Mbps")]
    pub radio_rate: String,
    /// Lower bound of TCP's retransmission timeout
    #[arg(long, default_value = "200ms")]
    pub min_rto: String,
    /// Give up on a peer silent this long
    #[arg(long, default_value = "60s")]
    pub idle_timeout: String,
    /// Segment size for every protocol, 64..=1400 (TCP/RCP MSS, E2TCP MSS,
    /// WWP payload; default 1400, the path MTU's). Give the same value to
    /// both ends.
    #[arg(long)]
    pub mss: Option<u16>,
    /// Through relays: this end's node id (then `--to-node` on the sending
    /// side; the address given is the first relay's)
    #[arg(long, value_parser = joulenet_runtime::route::parse_node)]
    pub node: Option<u32>,
    /// Authenticated mode: seal every datagram with this pre-shared key
    /// file (32 to 4096 bytes, e.g. `head -c 32 /dev/urandom > KEY`); give
    /// both ends the same file. Relays need no key.
    #[arg(long, value_name = "PATH")]
    pub psk_file: Option<PathBuf>,
    /// The rate of this host's link to its peer or first relay (e.g.
    /// 10Mbps): datagrams wait in an interface queue served at it, which
    /// the agents see (Hop paces its TXOPs by it, JTP stamps the rate left)
    #[arg(long)]
    pub link_rate: Option<String>,
}

impl Common {
    pub fn format(&self) -> Format {
        if self.json {
            Format::Json
        } else if self.json_stream {
            Format::JsonStream
        } else {
            Format::Human
        }
    }
    fn interval(&self) -> Result<Option<Duration>, String> {
        Ok(Some(dur(&self.interval)?).filter(|d| d.0 > 0))
    }
    pub fn tuning(&self) -> Result<Tuning, String> {
        let t = Tuning {
            min_rto: dur(&self.min_rto)?,
            link_rate_bps: link_rate(self.link_rate.as_deref())?,
            ..Tuning::default()
        };
        match self.mss {
            Some(bytes) => t.with_segment(bytes),
            // Sealing adds its bytes to every datagram: the segment gives
            // them up, so that datagrams stay within a 1500-byte MTU.
            None if self.psk_file.is_some() => {
                t.with_segment(joulenet_runtime::conn::MAX_SEGMENT - seal::OVERHEAD as u16)
            }
            None => Ok(t),
        }
    }
    fn psk(&self) -> Result<Option<Psk>, String> {
        self.psk_file.as_deref().map(Psk::load).transpose()
    }
    fn radio_rate(&self) -> Result<u64, String> {
        parse_rate(&self.radio_rate).map_err(|e| e.to_string())
    }
}

#[derive(Args)]
pub struct ServeArgs {
    /// Address and port to listen on. `recv --proto r2cp`: this host's
    /// address on one interface, once per path (`--bind A --bind B`)
    #[arg(long, default_value = "0.0.0.0:5201")]
    pub bind: Vec<SocketAddr>,
    /// Accept only this protocol (default: any); `recv --proto r2cp|r2cp-s|
    /// r2cp-stripe` receives over several paths (`--bind`, `--server`)
    #[arg(long)]
    pub proto: Option<ProtoArg>,
    /// Most connections at once; more are refused with a reason
    #[arg(long, default_value_t = 64)]
    pub max_conns: usize,
    /// Exit after one connection (iperf3's -1)
    #[arg(short = '1', long)]
    pub one_off: bool,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args)]
pub struct RecvArgs {
    /// Directory the files are written into (created if missing)
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub multihomed: crate::multihomed::MultihomedArgs,
    #[command(flatten)]
    pub serve: ServeArgs,
}

/// `--proto` of `serve`/`recv`: a two-party protocol, or R²CP's
/// multi-homed receiver (`recv` only).
#[derive(Copy, Clone)]
pub enum ProtoArg {
    TwoParty(Protocol),
    Multihomed(&'static str),
}

impl std::str::FromStr for ProtoArg {
    type Err = String;
    fn from_str(s: &str) -> Result<ProtoArg, String> {
        let lower = s.to_ascii_lowercase();
        match joulenet_runtime::multihomed::frame::multihomed_name(&lower) {
            Some(name) => Ok(ProtoArg::Multihomed(name)),
            None => s.parse().map(ProtoArg::TwoParty),
        }
    }
}

#[derive(Args)]
pub struct ClientArgs {
    /// Server, HOST[:PORT] (port 5201 by default)
    pub host: String,
    /// Protocol: any `joulenet list` marks `real` (tahoe, reno, newreno,
    /// sack, cubic, hbh-tcp, udp, wwp, e2tcp, rcp, rcp-stp)
    #[arg(long)]
    pub proto: Protocol,
    /// Bytes to send (e.g. 100MB)
    #[arg(short = 'n', long, conflicts_with = "time")]
    pub bytes: Option<String>,
    /// Seconds to send (default 10), counted as iperf3 counts them: from
    /// the moment the transport first takes data, after its handshake
    #[arg(short = 't', long)]
    pub time: Option<String>,
    /// Pace the sender at this rate (UDP default 1Mbps, as iperf3)
    #[arg(short = 'b', long)]
    pub bitrate: Option<String>,
    /// Through relays: the server's node id (with `--node`)
    #[arg(long, value_parser = joulenet_runtime::route::parse_node, requires = "node")]
    pub to_node: Option<u32>,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args)]
pub struct SendArgs {
    /// File to send
    pub file: PathBuf,
    /// Receiver, HOST[:PORT]
    pub host: String,
    /// Protocol: any `joulenet list` marks `real` except udp (files need a
    /// reliable protocol)
    #[arg(long, default_value = "cubic")]
    pub proto: Protocol,
    /// Through relays: the receiver's node id (with `--node`)
    #[arg(long, value_parser = joulenet_runtime::route::parse_node, requires = "node")]
    pub to_node: Option<u32>,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args)]
pub struct EmulateArgs {
    /// Address clients send to
    #[arg(long)]
    pub listen: SocketAddr,
    /// Server the relay forwards to, HOST:PORT
    #[arg(long)]
    pub forward: String,
    /// none | bernoulli:P | ge:GOOD_MEAN,BAD_MEAN,GOOD_LOSS,BAD_LOSS | onoff:ON,OFF,DROP | trace:PATH
    #[arg(long, default_value = "none")]
    pub loss: String,
    /// One-way delay added in each direction (e.g. 20ms)
    #[arg(long, default_value = "0")]
    pub delay: String,
    /// Link rate in each direction (e.g. 10Mbps); unlimited by default
    #[arg(long)]
    pub rate: Option<String>,
    /// Seed of the loss model's random streams
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Drop-tail queue per direction, packets
    #[arg(long, default_value_t = 1000)]
    pub queue: usize,
    /// Stop after this long and print the counts as JSON (default: run until killed)
    #[arg(long)]
    pub duration: Option<String>,
    /// Deliver a surviving datagram twice with this probability (0.1 or 10%)
    #[arg(long, default_value = "0")]
    pub duplicate: String,
    /// Hold a surviving datagram back by --reorder-gap with this probability,
    /// so that later ones overtake it (0.1 or 10%)
    #[arg(long, default_value = "0")]
    pub reorder: String,
    /// How long a reordered datagram is held back
    #[arg(long, default_value = "5ms")]
    pub reorder_gap: String,
    /// Client slots (an upstream socket each); when all are taken the least
    /// recently active client's slot is reused
    #[arg(long, default_value_t = 1024)]
    pub max_clients: usize,
    /// A client silent this long loses its slot
    #[arg(long, default_value = "60s")]
    pub client_idle: String,
}

fn server_options(a: &ServeArgs, mode: ServerMode) -> Result<ServerOptions, String> {
    let bind = match a.bind[..] {
        [one] => one,
        _ => return Err("--bind: one address (several only for recv --proto r2cp)".into()),
    };
    let mut o = ServerOptions::new(bind, mode);
    o.protocol = match a.proto {
        None => None,
        Some(ProtoArg::TwoParty(p)) => Some(p),
        Some(ProtoArg::Multihomed(name)) => {
            return Err(format!(
                "{name} is a multi-homed receiver: `joulenet recv --proto {name} --out DIR \
                 --bind LOCAL --server HOST:PORT ...` (serve does not run it)"
            ))
        }
    };
    o.max_conns = a.max_conns;
    o.one_off = a.one_off;
    o.interval = a.common.interval()?;
    o.format = a.common.format();
    o.tuning = a.common.tuning()?;
    o.radio = a.common.radio.clone();
    o.radio_rate_bps = a.common.radio_rate()?;
    o.idle_timeout = dur(&a.common.idle_timeout)?;
    o.node = a.common.node;
    o.psk = a.common.psk()?;
    Ok(o)
}

pub fn serve(a: ServeArgs) -> Result<(), String> {
    let mut o = server_options(&a, ServerMode::Discard)?;
    o.stop = Some(signals::stop_on_termination()?);
    let sock = server::bind(&o)?;
    run_server(&o, sock, Box::new(std::io::stdout())).map(|_| ())
}

pub fn recv(a: RecvArgs) -> Result<(), String> {
    if let Some(ProtoArg::Multihomed(name)) = a.serve.proto {
        return crate::multihomed::recv(name, &a.out, &a.serve, &a.multihomed);
    }
    a.multihomed.refuse_without_r2cp()?;
    let mut o = server_options(&a.serve, ServerMode::Files(a.out.clone()))?;
    // Stopped by a signal, recv ends its transfers itself: their senders
    // hear why, their partial files are removed, and it exits non-zero if
    // one was cut short.
    o.stop = Some(signals::stop_on_termination()?);
    let sock = server::bind(&o)?;
    let report = run_server(&o, sock, Box::new(std::io::stdout()))?;
    match report
        .files
        .iter()
        .find(|f| !matches!(f, FileOutcome::Complete { .. }))
    {
        Some(FileOutcome::Failed { verdict, reason }) => {
            Err(format!("transfer failed ({verdict}): {reason}"))
        }
        Some(_) => Err("transfer incomplete".into()),
        None => Ok(()),
    }
}

fn client_options(
    host: &str,
    proto: Protocol,
    app: ClientApp,
    c: &Common,
) -> Result<ClientOptions, String> {
    let mut o = ClientOptions::new(host, proto, app);
    o.interval = c.interval()?;
    o.format = c.format();
    o.tuning = c.tuning()?;
    o.radio = c.radio.clone();
    o.radio_rate_bps = c.radio_rate()?;
    o.idle_timeout = dur(&c.idle_timeout)?;
    o.node = c.node;
    o.psk = c.psk()?;
    Ok(o)
}

pub fn client(a: ClientArgs) -> Result<(), String> {
    let limit = match (&a.bytes, &a.time) {
        (Some(n), _) => Limit::Bytes(parse_size(n).map_err(|e| e.to_string())?),
        (None, t) => {
            let d = dur(t.as_deref().unwrap_or("10"))?;
            Limit::For(d)
        }
    };
    let rate_bps = a
        .bitrate
        .as_deref()
        .map(parse_rate)
        .transpose()
        .map_err(|e| e.to_string())?;
    let mut o = client_options(
        &a.host,
        a.proto,
        ClientApp::Generate { limit, rate_bps },
        &a.common,
    )?;
    o.to_node = a.to_node;
    // Stopped by a signal, the client reports what it measured, marked
    // interrupted, and exits non-zero (as iperf3 does).
    o.stop = Some(signals::stop_on_termination()?);
    run_client(&o, Box::new(std::io::stdout())).map(|_| ())
}

pub fn send(a: SendArgs) -> Result<(), String> {
    let mut o = client_options(&a.host, a.proto, ClientApp::File(a.file.clone()), &a.common)?;
    o.to_node = a.to_node;
    o.stop = Some(signals::stop_on_termination()?);
    run_client(&o, Box::new(std::io::stdout())).map(|_| ())
}

pub fn emulate(a: EmulateArgs) -> Result<(), String> {
    let mut o = EmulateOptions::new(a.listen, &a.forward, parse_loss(&a.loss)?);
    o.seed = a.seed;
    o.delay = dur(&a.delay)?;
    o.rate_bps = a
        .rate
        .as_deref()
        .map(parse_rate)
        .transpose()
        .map_err(|e| e.to_string())?;
    o.queue_packets = a.queue.max(1);
    o.duplicate = parse_probability(&a.duplicate).map_err(|e| format!("--duplicate: {e}"))?;
    o.reorder = parse_probability(&a.reorder).map_err(|e| format!("--reorder: {e}"))?;
    o.reorder_gap = dur(&a.reorder_gap)?;
    o.max_clients = a.max_clients;
    o.client_idle = dur(&a.client_idle)?;
    o.validate()?;
    let sock = emulate::bind(&o)?;
    let stop = Arc::new(AtomicBool::new(false));
    if let Some(d) = &a.duration {
        let d = dur(d)?;
        let s = Arc::clone(&stop);
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_nanos(d.0));
            s.store(true, std::sync::atomic::Ordering::Relaxed);
        });
    }
    eprintln!(
        "emulating {} -> {}: loss {}, delay {}, rate {}",
        a.listen,
        a.forward,
        a.loss,
        a.delay,
        a.rate.as_deref().unwrap_or("unlimited")
    );
    let counts = run_emulator(&o, sock, stop)?;
    println!("{}", serde_json::to_string(&counts).unwrap_or_default());
    Ok(())
}
