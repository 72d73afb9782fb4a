-- joulenet.lua: a Wireshark dissector for every joulenet wire format.
--
--   wireshark -X lua_script:tools/wireshark/joulenet.lua capture.pcap
--   tshark    -X lua_script:tools/wireshark/joulenet.lua -r capture.pcap -V
--
-- or copy this file into Wireshark's personal Lua plugins folder
-- (Help > About Wireshark > Folders). It decodes:
--
-- * the runtime's datagrams (`joulenet send/recv/serve/relay`) on UDP port
--   5201 (preference "joulenet.udp_ports"; a heuristic also finds them on
--   any port): the framing versions 2 and 3 (route header) and the sealed
--   versions 4 and 5 (readable header and packet number, the rest marked
--   encrypted), and inside them the agent packet by the header's protocol
--   code: TCP (handed to Wireshark's TCP dissector), UDP, WWP, E2TCP, RCP,
--   nackrate;
-- * the simulator's captures: files that hold only TCP/UDP are plain raw
--   IPv4 (Wireshark's own dissectors); files that hold joulenet's own
--   formats use LINKTYPE_USER0 (147) with a 20-byte pseudo-header naming
--   the format: WWP, E2TCP (compact and uncompressed), RCP, JTP (compact
--   and paper layouts), Hop, nackrate; TCP/UDP frames in such files go to Wireshark's
--   IPv4 dissector.
--
-- Layouts and field names follow docs/wire.md and crates/wire. Bytes are
-- never trusted: a packet too short for what its header announces is
-- marked with the expert info joulenet.malformed (a record cut by the
-- capture's snap length is marked joulenet.cut instead), never a Lua error.

local RUNTIME_PORT = 5201

----------------------------------------------------------------------------
-- Helpers
----------------------------------------------------------------------------

-- Bit `m` (a power of two) of `x`.
local function has(x, m)
    return math.floor(x / m) % 2 == 1
end

local function tohex(tvb, off, n)
    return tostring(tvb:range(off, n):bytes())
end

local function name_of(t, v)
    return t[v] or ("unknown (" .. v .. ")")
end

local kind_names = {
    [1] = "Hello", [2] = "Data", [3] = "Close", [4] = "Refused",
    [5] = "Retry", [6] = "Query", [7] = "Offer",
}

local protocol_names = {
    [1] = "tahoe", [2] = "reno", [3] = "newreno", [4] = "sack", [5] = "cubic",
    [6] = "rate-sack", [7] = "stp", [16] = "udp", [17] = "wwp", [18] = "e2tcp", [19] = "rcp",
    [20] = "rcp-stp", [21] = "hbh-tcp", [22] = "hop", [23] = "jtp", [24] = "jtp0",
    [25] = "jtp10", [26] = "jtp20", [27] = "atp", [28] = "r2cp", [29] = "r2cp-s",
    [30] = "r2cp-stripe", [31] = "e2tcp-split", [32] = "nackrate",
}

-- The agent packet's format by runtime protocol code.
local protocol_format = {
    [1] = "tcp", [2] = "tcp", [3] = "tcp", [4] = "tcp", [5] = "tcp", [6] = "tcp",
    [21] = "tcp", [16] = "udp", [17] = "wwp", [18] = "e2tcp", [19] = "rcp",
    [20] = "rcp", [22] = "hop", [23] = "jtp", [24] = "jtp", [25] = "jtp", [26] = "jtp",
    [27] = "jtp", [28] = "rcp", [29] = "rcp", [30] = "rcp",
    -- TCP segments between the sender and the first relay (its split proxy),
    -- E2TCP beyond it: told apart by the route header's ports (below).
    [31] = "tcp-or-e2tcp",
    [32] = "nackrate",
}

local verdict_names = {
    [1] = "verified", [2] = "mismatch", [3] = "rename_failed", [4] = "refused",
    [5] = "write_failed", [6] = "incomplete", [7] = "delivered",
}

local format_names = {
    [0] = "no flow (link-state advertisement)", [1] = "TCP", [2] = "UDP", [3] = "WWP",
    [4] = "E2TCP", [5] = "RCP", [6] = "JTP", [7] = "Hop", [8] = "nackrate",
}

local network_names = { [0] = "none", [4] = "IPv4" }

local wwp_types = {
    [1] = "SYN", [2] = "SYN_ACK", [3] = "DATA", [4] = "NS_ACK", [5] = "PROBE1",
    [6] = "PR1_ACK", [7] = "PROBE2", [8] = "PR2_ACK", [9] = "PROBE3",
    [10] = "FIN", [11] = "FIN_ACK",
}

local jtp_kinds = { [1] = "data", [2] = "ACK" }

local hop_types = {
    [0] = "DATA", [1] = "BSYN", [2] = "BACK", [3] = "virtual BSYN",
    [4] = "end-to-end BACK", [5] = "FIN", [6] = "FIN-ACK",
}

----------------------------------------------------------------------------
-- Protocols and fields
----------------------------------------------------------------------------

local p_jn = Proto("joulenet", "joulenet runtime framing")
local p_sim = Proto("joulenet.sim", "joulenet simulator capture")
local p_ip = Proto("joulenet.ipv4", "joulenet synthetic IPv4 header")
local p_udp = Proto("joulenet.udp", "joulenet UDP")
local p_wwp = Proto("joulenet.wwp", "joulenet WWP (Wave & Wait Protocol)")
local p_e2tcp = Proto("joulenet.e2tcp", "joulenet E2TCP")
local p_rcp = Proto("joulenet.rcp", "joulenet RCP (Reception Control Protocol)")
local p_jtp = Proto("joulenet.jtp", "joulenet JTP (JAVeLEN Transport Protocol)")
local p_hop = Proto("joulenet.hop", "joulenet Hop (block-switched transport)")
local p_nr = Proto("joulenet.nackrate", "joulenet nackrate (rate-paced, NACK-repaired)")

local F = ProtoField

-- Runtime framing (docs/wire.md, "Runtime framing").
local f = {
    magic = F.string("joulenet.magic", "Magic"),
    version = F.uint8("joulenet.version", "Version"),
    kind = F.uint8("joulenet.kind", "Kind", base.DEC, kind_names),
    protocol = F.uint8("joulenet.protocol", "Protocol", base.DEC, protocol_names),
    reserved = F.bytes("joulenet.reserved", "Reserved"),
    conn_id = F.uint64("joulenet.conn_id", "Connection id", base.HEX),
    token = F.bytes("joulenet.token", "Token"),
    agent = F.bytes("joulenet.agent", "Agent packet"),
    route_src_node = F.uint32("joulenet.route.src_node", "Source node"),
    route_src_port = F.uint16("joulenet.route.src_port", "Source port"),
    route_dst_node = F.uint32("joulenet.route.dst_node", "Destination node"),
    route_dst_port = F.uint16("joulenet.route.dst_port", "Destination port"),
    route_hop_limit = F.uint8("joulenet.route.hop_limit", "Hop limit"),
    route_reserved = F.bytes("joulenet.route.reserved", "Reserved"),
    pn = F.uint64("joulenet.sealed.pn", "Packet number"),
    nonce = F.bytes("joulenet.sealed.nonce", "Client nonce"),
    sealed_token = F.bytes("joulenet.sealed.token", "Token"),
    ciphertext = F.bytes("joulenet.sealed.ciphertext", "Encrypted payload (ChaCha20-Poly1305)"),
    tag = F.bytes("joulenet.sealed.tag", "Poly1305 tag"),
    verdict = F.uint8("joulenet.close.verdict", "Verdict", base.DEC, verdict_names),
    stream_bytes = F.uint64("joulenet.close.stream_bytes", "Stream bytes"),
    close_sha = F.bytes("joulenet.close.sha256", "SHA-256 of the file on disk"),
    close_reason = F.string("joulenet.close.reason", "Reason"),
    refused_reason = F.string("joulenet.refused.reason", "Reason"),
    query_size = F.uint64("joulenet.query.size", "File size"),
    query_sha = F.bytes("joulenet.query.sha256", "File SHA-256"),
    query_name = F.string("joulenet.query.name", "File name"),
    offer_prefix = F.uint64("joulenet.offer.prefix_len", "Prefix length"),
    offer_sha = F.bytes("joulenet.offer.sha256", "SHA-256 of the prefix"),
    link_kind = F.uint8("joulenet.link.kind", "Link frame", base.DEC, { [1] = "Mark", [2] = "Report" }),
    link_mark = F.uint64("joulenet.link.mark", "Mark number"),
    link_sent = F.uint64("joulenet.link.sent", "Datagrams sent before the mark"),
    link_heard = F.uint64("joulenet.link.heard", "Datagrams heard before the mark"),
}
p_jn.fields = f

local e_malformed = ProtoExpert.new("joulenet.malformed", "Malformed joulenet packet",
    expert.group.MALFORMED, expert.severity.ERROR)
local e_cut = ProtoExpert.new("joulenet.cut", "Cut by the capture's snap length",
    expert.group.UNDECODED, expert.severity.NOTE)
local e_checksum = ProtoExpert.new("joulenet.bad_checksum", "Bad checksum",
    expert.group.CHECKSUM, expert.severity.ERROR)
p_jn.experts = { e_malformed, e_cut, e_checksum }

-- Simulator pseudo-header (crates/sim/src/pcap.rs).
local fs = {
    magic = F.string("joulenet.sim.magic", "Magic"),
    version = F.uint8("joulenet.sim.version", "Version"),
    format = F.uint8("joulenet.sim.format", "Format", base.DEC, format_names),
    network = F.uint8("joulenet.sim.network", "Network header", base.DEC, network_names),
    reserved = F.bytes("joulenet.sim.reserved", "Reserved"),
    src_node = F.uint32("joulenet.sim.src_node", "Source node"),
    src_port = F.uint16("joulenet.sim.src_port", "Source port"),
    dst_node = F.uint32("joulenet.sim.dst_node", "Destination node"),
    dst_port = F.uint16("joulenet.sim.dst_port", "Destination port"),
    lsa = F.bytes("joulenet.sim.lsa", "Link-state advertisement"),
}
p_sim.fields = fs

-- The synthetic IPv4 header (docs/wire.md, "IPv4 (pcap only)").
local fi = {
    version = F.uint8("joulenet.ipv4.version", "Version", base.DEC, nil, 0xf0),
    ihl = F.uint8("joulenet.ipv4.ihl", "Header length (words)", base.DEC, nil, 0x0f),
    tos = F.uint8("joulenet.ipv4.tos", "TOS"),
    total_len = F.uint16("joulenet.ipv4.total_len", "Total length"),
    ident = F.uint16("joulenet.ipv4.id", "Identification"),
    frag = F.uint16("joulenet.ipv4.frag", "Flags and fragment offset", base.HEX),
    ttl = F.uint8("joulenet.ipv4.ttl", "TTL"),
    proto = F.uint8("joulenet.ipv4.proto", "Protocol"),
    checksum = F.uint16("joulenet.ipv4.checksum", "Header checksum", base.HEX),
    src = F.ipv4("joulenet.ipv4.src", "Source"),
    dst = F.ipv4("joulenet.ipv4.dst", "Destination"),
}
p_ip.fields = fi

local fu = {
    src_port = F.uint16("joulenet.udp.src_port", "Source port"),
    dst_port = F.uint16("joulenet.udp.dst_port", "Destination port"),
    length = F.uint16("joulenet.udp.length", "Length"),
    checksum = F.uint16("joulenet.udp.checksum", "Checksum", base.HEX),
    payload = F.bytes("joulenet.udp.payload", "Payload"),
}
p_udp.fields = fu

-- WWP (crates/wire/src/wwp.rs).
local fw = {
    type = F.uint8("joulenet.wwp.type", "Type", base.DEC, wwp_types, 0xf0),
    level = F.uint8("joulenet.wwp.level", "Level", base.DEC, nil, 0x0f),
    id = F.uint8("joulenet.wwp.id", "Id"),
    seq = F.uint24("joulenet.wwp.seq", "Seq"),
    aux = F.uint8("joulenet.wwp.aux", "Aux"),
    probe_cycle = F.bool("joulenet.wwp.ns_ack.probe", "Ends a probe cycle", 8, nil, 0x01),
    range_start = F.uint24("joulenet.wwp.range.start", "Missing range start"),
    range_count = F.uint8("joulenet.wwp.range.count", "Missing range count"),
    payload = F.bytes("joulenet.wwp.payload", "Payload"),
}
p_wwp.fields = fw

-- E2TCP (crates/wire/src/e2tcp.rs).
local fe = {
    bitmap = F.uint8("joulenet.e2tcp.bitmap", "Bitmap", base.HEX),
    syn = F.bool("joulenet.e2tcp.syn", "S (SYN)", 8, nil, 0x80),
    fin = F.bool("joulenet.e2tcp.fin", "F (FIN)", 8, nil, 0x40),
    has_seq = F.bool("joulenet.e2tcp.has_seq", "Q (sequence number present)", 8, nil, 0x20),
    has_ack = F.bool("joulenet.e2tcp.has_ack", "A (acknowledgement present)", 8, nil, 0x10),
    has_window = F.bool("joulenet.e2tcp.has_window", "W (window present)", 8, nil, 0x08),
    has_addrs = F.bool("joulenet.e2tcp.has_addrs", "D (addresses present)", 8, nil, 0x04),
    sack_count = F.uint8("joulenet.e2tcp.sack_count", "n (SACK blocks)", base.DEC, nil, 0x03),
    layout = F.string("joulenet.e2tcp.layout", "Layout"),
    conn_id = F.uint8("joulenet.e2tcp.conn_id", "Connection id"),
    checksum = F.uint16("joulenet.e2tcp.checksum", "Checksum", base.HEX),
    checksum_ok = F.bool("joulenet.e2tcp.checksum_ok", "Checksum correct"),
    src_node = F.uint32("joulenet.e2tcp.src_node", "Source node"),
    src_port = F.uint16("joulenet.e2tcp.src_port", "Source port"),
    dst_node = F.uint32("joulenet.e2tcp.dst_node", "Destination node"),
    dst_port = F.uint16("joulenet.e2tcp.dst_port", "Destination port"),
    seq = F.uint32("joulenet.e2tcp.seq", "Sequence number"),
    ack = F.uint32("joulenet.e2tcp.ack", "Acknowledgement number"),
    window = F.uint16("joulenet.e2tcp.window", "Window"),
    sack_left = F.uint32("joulenet.e2tcp.sack.left", "SACK left edge"),
    sack_right = F.uint32("joulenet.e2tcp.sack.right", "SACK right edge"),
    payload = F.bytes("joulenet.e2tcp.payload", "Payload"),
}
p_e2tcp.fields = fe

-- RCP (crates/wire/src/rcp.rs).
local fr = {
    src_port = F.uint16("joulenet.rcp.src_port", "Source port"),
    dst_port = F.uint16("joulenet.rcp.dst_port", "Destination port"),
    seq = F.uint32("joulenet.rcp.seq", "Sequence number / SEG.REQ"),
    ack = F.uint32("joulenet.rcp.ack", "Acknowledgment / SEG.DEQ / SND.LIM"),
    doff = F.uint8("joulenet.rcp.doff", "Data offset (words)", base.DEC, nil, 0xf0),
    reserved_bits = F.uint8("joulenet.rcp.reserved_bits", "Reserved bits", base.HEX, nil, 0x0f),
    flags = F.uint8("joulenet.rcp.flags", "Flags", base.HEX),
    eln = F.bool("joulenet.rcp.flags.eln", "ELN (reserved)", 8, nil, 0x80),
    pul = F.bool("joulenet.rcp.flags.pul", "PUL", 8, nil, 0x40),
    req = F.bool("joulenet.rcp.flags.req", "REQ", 8, nil, 0x20),
    ackf = F.bool("joulenet.rcp.flags.ack", "ACK", 8, nil, 0x10),
    lim = F.bool("joulenet.rcp.flags.lim", "LIM", 8, nil, 0x08),
    rst = F.bool("joulenet.rcp.flags.rst", "RST", 8, nil, 0x04),
    syn = F.bool("joulenet.rcp.flags.syn", "SYN", 8, nil, 0x02),
    fin = F.bool("joulenet.rcp.flags.fin", "FIN", 8, nil, 0x01),
    length = F.uint16("joulenet.rcp.length", "Request length"),
    window = F.uint16("joulenet.rcp.window", "Window (64-byte units)"),
    reserved = F.uint16("joulenet.rcp.reserved", "Reserved", base.HEX),
    block_start = F.uint32("joulenet.rcp.block.start", "Request block start"),
    block_end = F.uint32("joulenet.rcp.block.end", "Request block end"),
    payload = F.bytes("joulenet.rcp.payload", "Payload"),
}
p_rcp.fields = fr

-- JTP (crates/wire/src/jtp.rs).
local fj = {
    version = F.uint8("joulenet.jtp.version", "Version", base.DEC, nil, 0xf0),
    kind = F.uint8("joulenet.jtp.kind", "Kind", base.DEC, jtp_kinds, 0x0f),
    flags = F.uint8("joulenet.jtp.flags", "Flags", base.HEX),
    paper = F.bool("joulenet.jtp.flags.paper", "P (paper layout)", 8, nil, 0x80),
    local_ = F.bool("joulenet.jtp.flags.local", "L (retransmitted from a relay's cache)", 8, nil, 0x04),
    retx = F.bool("joulenet.jtp.flags.retx", "R (end-to-end retransmission)", 8, nil, 0x02),
    urgent = F.bool("joulenet.jtp.flags.urgent", "R (urgent)", 8, nil, 0x02),
    fin = F.bool("joulenet.jtp.flags.fin", "F (last packet / holds everything)", 8, nil, 0x01),
    layout = F.string("joulenet.jtp.layout", "Layout"),
    flow_id = F.uint16("joulenet.jtp.flow_id", "Flow id"),
    seq = F.uint32("joulenet.jtp.seq", "Sequence number"),
    available_rate = F.uint32("joulenet.jtp.available_rate", "Minimum effective available rate (b/s)"),
    energy_budget = F.uint32("joulenet.jtp.energy_budget", "Energy budget (µJ)"),
    energy_used = F.uint32("joulenet.jtp.energy_used", "Energy used (µJ)"),
    loss_tolerance = F.uint16("joulenet.jtp.loss_tolerance", "Loss tolerance (/65535)"),
    hops = F.uint8("joulenet.jtp.hops", "Hops"),
    priority = F.uint8("joulenet.jtp.priority", "Priority"),
    cum_ack = F.uint32("joulenet.jtp.cum_ack", "Cumulative ACK"),
    rate = F.uint32("joulenet.jtp.rate", "Sending rate (b/s)"),
    ack_energy_budget = F.uint32("joulenet.jtp.ack_energy_budget", "Energy budget per packet (µJ)"),
    feedback_period = F.uint32("joulenet.jtp.feedback_period", "Feedback period (µs)"),
    highest = F.uint32("joulenet.jtp.highest", "Highest sequence number received + 1"),
    snack_count = F.uint16("joulenet.jtp.snack_count", "SNACK count"),
    local_count = F.uint16("joulenet.jtp.local_count", "Locally-recovered count"),
    snack = F.uint32("joulenet.jtp.snack", "SNACK"),
    recovered = F.uint32("joulenet.jtp.recovered", "Locally recovered"),
    padding = F.bytes("joulenet.jtp.padding", "Padding (paper layout)"),
    payload = F.bytes("joulenet.jtp.payload", "Payload"),
}
p_jtp.fields = fj

-- Hop (crates/wire/src/hop.rs).
local fh = {
    version = F.uint8("joulenet.hop.version", "Version", base.DEC, nil, 0xf0),
    type = F.uint8("joulenet.hop.type", "Type", base.DEC, hop_types, 0x0f),
    ttl = F.uint8("joulenet.hop.ttl", "TTL"),
    packet_num = F.uint16("joulenet.hop.packet_num", "packet_num"),
    frames = F.uint16("joulenet.hop.frames", "Frame count"),
    count = F.uint16("joulenet.hop.count", "Count"),
    flow_id = F.uint32("joulenet.hop.flow_id", "flow_id"),
    block_num = F.uint32("joulenet.hop.block_num", "block_num"),
    block_len = F.uint32("joulenet.hop.block_len", "Block length"),
    micro_block = F.bytes("joulenet.hop.micro_block", "Micro-block"),
    bitmap = F.bytes("joulenet.hop.bitmap", "Bitmap"),
    held = F.uint16("joulenet.hop.held", "Frames held"),
    data = F.bytes("joulenet.hop.data", "Frame bytes"),
}
p_hop.fields = fh

-- nackrate (crates/wire/src/nackrate.rs).
local nr_kinds = { [1] = "DATA", [2] = "ACK" }
local fn = {
    version = F.uint8("joulenet.nackrate.version", "Version", base.DEC, nil, 0xf0),
    kind = F.uint8("joulenet.nackrate.kind", "Kind", base.DEC, nr_kinds, 0x0f),
    flags = F.uint8("joulenet.nackrate.flags", "Flags", base.HEX),
    checksum = F.uint16("joulenet.nackrate.checksum", "Checksum", base.HEX),
    conn_id = F.uint32("joulenet.nackrate.conn_id", "Connection id", base.HEX),
    packet = F.uint32("joulenet.nackrate.packet", "Packet number"),
    offset = F.uint64("joulenet.nackrate.offset", "Stream offset"),
    largest = F.uint32("joulenet.nackrate.largest", "Largest packet received"),
    ack_delay = F.uint32("joulenet.nackrate.ack_delay", "ACK delay (µs)"),
    rtime = F.uint32("joulenet.nackrate.receiver_time", "Receiver time (µs)"),
    rbytes = F.uint32("joulenet.nackrate.received_bytes", "Bytes received"),
    rpackets = F.uint32("joulenet.nackrate.received_packets", "Packets received"),
    cumulative = F.uint64("joulenet.nackrate.cumulative", "Cumulative offset"),
    span = F.uint32("joulenet.nackrate.span", "Span"),
    ranges = F.uint16("joulenet.nackrate.ranges", "Missing ranges"),
    range = F.bytes("joulenet.nackrate.range", "Missing range"),
    data = F.bytes("joulenet.nackrate.data", "Payload"),
}
p_nr.fields = fn

----------------------------------------------------------------------------
-- Length checks: malformed (the packet itself is too short) versus cut
-- (the capture kept fewer bytes than the packet had)
----------------------------------------------------------------------------

-- Are bytes [off, off + n) present? If not, says why in `tree` and returns
-- false: malformed when the packet is shorter than that, cut when only the
-- capture is.
--
-- `rl` is the packet's real length: a Lua sub-Tvb forgets the reported
-- length of a record the capture cut (Wireshark issue 15655), so every
-- dissector below is handed it explicitly.
local function need(tvb, rl, tree, off, n, what)
    if off + n <= tvb:len() then
        return true
    end
    if off + n > rl then
        tree:add_proto_expert_info(e_malformed,
            string.format("%s: needs %d bytes at offset %d, the packet has %d",
                what, n, off, rl))
    else
        tree:add_proto_expert_info(e_cut,
            string.format("%s: cut by the capture (%d of %d bytes kept)",
                what, tvb:len(), rl))
    end
    return false
end

local function malformed(tree, why)
    tree:add_proto_expert_info(e_malformed, why)
end

-- The rest of `tvb` from `off`, shown as `field`, if any (cut or not).
local function rest(tvb, rl, tree, field, off)
    if rl > off and tvb:len() > off then
        local item = tree:add(field, tvb:range(off))
        if tvb:len() < rl then
            item:append_text(string.format(" (%d of %d bytes captured)", tvb:len() - off, rl - off))
        end
    end
end

local function set_info(pinfo, proto, text)
    pinfo.cols.protocol:set(proto)
    pinfo.cols.info:set(text)
end

----------------------------------------------------------------------------
-- Internet checksum (RFC 1071) over the captured bytes
----------------------------------------------------------------------------

local function internet_checksum(tvb)
    local sum = 0
    local n = tvb:len()
    local i = 0
    while i + 1 < n do
        sum = sum + tvb:range(i, 2):uint()
        i = i + 2
    end
    if i < n then
        sum = sum + tvb:range(i, 1):uint() * 256
    end
    while sum > 0xffff do
        sum = (sum % 0x10000) + math.floor(sum / 0x10000)
    end
    return 0xffff - sum
end

----------------------------------------------------------------------------
-- UDP (crates/wire/src/udp.rs), as the runtime's udp protocol carries it
----------------------------------------------------------------------------

local function dissect_udp(tvb, pinfo, tree, rl)
    local t = tree:add(p_udp, tvb:range(0))
    if not need(tvb, rl, t, 0, 8, "UDP header") then return end
    t:add(fu.src_port, tvb:range(0, 2))
    t:add(fu.dst_port, tvb:range(2, 2))
    t:add(fu.length, tvb:range(4, 2))
    t:add(fu.checksum, tvb:range(6, 2))
    rest(tvb, rl, t, fu.payload, 8)
    set_info(pinfo, "JN/UDP", string.format("UDP %d → %d len=%d",
        tvb:range(0, 2):uint(), tvb:range(2, 2):uint(), tvb:range(4, 2):uint()))
end

----------------------------------------------------------------------------
-- WWP
----------------------------------------------------------------------------

local function dissect_wwp(tvb, pinfo, tree, rl)
    local t = tree:add(p_wwp, tvb:range(0))
    if not need(tvb, rl, t, 0, 6, "WWP header") then
        pinfo.cols.protocol:set("WWP")
        return
    end
    local b0 = tvb:range(0, 1):uint()
    local ty = math.floor(b0 / 16)
    local level = b0 % 16
    local id = tvb:range(1, 1):uint()
    local seq = tvb:range(2, 3):uint()
    local aux = tvb:range(5, 1):uint()
    t:add(fw.type, tvb:range(0, 1))
    t:add(fw.level, tvb:range(0, 1))
    t:add(fw.id, tvb:range(1, 1))
    t:add(fw.seq, tvb:range(2, 3))
    local auxi = t:add(fw.aux, tvb:range(5, 1))
    local name = wwp_types[ty]
    t:append_text(string.format(", %s, seq %d", name or ("type " .. ty), seq))
    local info = string.format("WWP %s seq=%d", name or ("type " .. ty), seq)
    local plen = rl - 6
    if name == nil then
        malformed(t, "unknown WWP type " .. ty)
    elseif ty == 3 then
        info = string.format("WWP DATA seq=%d level=%d id=%d/%d len=%d", seq, level, id, aux, plen)
        if plen < 1 then malformed(t, "WWP DATA without payload") end
        if aux == 0 or id >= aux then malformed(t, "WWP DATA with id ≥ aux or aux = 0") end
        rest(tvb, rl, t, fw.payload, 6)
    elseif ty == 4 then
        auxi:add(fw.probe_cycle, tvb:range(5, 1))
        info = string.format("WWP NS_ACK next=%d level=%d", seq, level)
        if plen % 4 ~= 0 then
            malformed(t, "NS_ACK payload is not a whole number of 4-byte ranges")
        end
        local off = 6
        while off + 4 <= rl do
            if not need(tvb, rl, t, off, 4, "missing range") then break end
            local r = t:add(tvb:range(off, 4), string.format("Missing: %d segments from %d",
                tvb:range(off + 3, 1):uint(), tvb:range(off, 3):uint()))
            r:add(fw.range_start, tvb:range(off, 3))
            r:add(fw.range_count, tvb:range(off + 3, 1))
            if tvb:range(off + 3, 1):uint() == 0 then malformed(r, "empty missing range") end
            off = off + 4
        end
        info = info .. string.format(" missing=%d ranges", math.floor(plen / 4))
    elseif plen > 0 then
        malformed(t, "payload on a WWP control segment")
    end
    set_info(pinfo, "WWP", info)
end

----------------------------------------------------------------------------
-- E2TCP
----------------------------------------------------------------------------

local function dissect_e2tcp(tvb, pinfo, tree, rl, layout)
    local t = tree:add(p_e2tcp, tvb:range(0))
    pinfo.cols.protocol:set("E2TCP")
    if not need(tvb, rl, t, 0, 4, "E2TCP header") then return end
    if layout then t:add(fe.layout, layout):set_generated() end
    local bitmap = tvb:range(0, 1):uint()
    local bt = t:add(fe.bitmap, tvb:range(0, 1))
    for _, fl in ipairs({ fe.syn, fe.fin, fe.has_seq, fe.has_ack, fe.has_window, fe.has_addrs, fe.sack_count }) do
        bt:add(fl, tvb:range(0, 1))
    end
    t:add(fe.conn_id, tvb:range(1, 1))
    local cs = t:add(fe.checksum, tvb:range(2, 2))
    local n_sack = bitmap % 4
    local has_ack = has(bitmap, 0x10)
    if n_sack == 3 or (n_sack > 0 and not has_ack) then
        malformed(t, "E2TCP: n = 3, or SACK blocks without an acknowledgement number")
        return
    end
    local len = 4
    if has(bitmap, 0x04) then len = len + 12 end
    if has(bitmap, 0x20) then len = len + 4 end
    if has_ack then len = len + 4 end
    if has(bitmap, 0x08) then len = len + 2 end
    len = len + 4 * n_sack
    local full = tvb:len() == rl
    if full and tvb:len() >= len then
        local ok = internet_checksum(tvb) == 0
        cs:add(fe.checksum_ok, ok):set_generated()
        if not ok then cs:add_proto_expert_info(e_checksum, "E2TCP checksum does not verify") end
    end
    if not need(tvb, rl, t, 0, len, "E2TCP header (the bitmap's fields)") then return end
    local off = 4
    local parts = {}
    if has(bitmap, 0x80) then parts[#parts + 1] = "SYN" end
    if has(bitmap, 0x40) then parts[#parts + 1] = "FIN" end
    if has(bitmap, 0x04) then
        t:add(fe.src_node, tvb:range(off, 4))
        t:add(fe.src_port, tvb:range(off + 4, 2))
        t:add(fe.dst_node, tvb:range(off + 6, 4))
        t:add(fe.dst_port, tvb:range(off + 10, 2))
        parts[#parts + 1] = string.format("%d:%d→%d:%d", tvb:range(off, 4):uint(),
            tvb:range(off + 4, 2):uint(), tvb:range(off + 6, 4):uint(), tvb:range(off + 10, 2):uint())
        off = off + 12
    end
    if has(bitmap, 0x20) then
        t:add(fe.seq, tvb:range(off, 4))
        parts[#parts + 1] = "seq=" .. tvb:range(off, 4):uint()
        off = off + 4
    end
    local ack = 0
    if has_ack then
        t:add(fe.ack, tvb:range(off, 4))
        ack = tvb:range(off, 4):uint()
        parts[#parts + 1] = "ack=" .. ack
        off = off + 4
    end
    if has(bitmap, 0x08) then
        t:add(fe.window, tvb:range(off, 2))
        parts[#parts + 1] = "win=" .. tvb:range(off, 2):uint()
        off = off + 2
    end
    for i = 1, n_sack do
        local l = tvb:range(off, 2):uint()
        local r = tvb:range(off + 2, 2):uint()
        local left = (ack + l) % 4294967296
        local right = (ack + r) % 4294967296
        local st = t:add(tvb:range(off, 4), string.format("SACK block %d: [%d, %d)", i, left, right))
        st:add(fe.sack_left, tvb:range(off, 2), left)
        st:add(fe.sack_right, tvb:range(off + 2, 2), right)
        if l >= r then malformed(st, "empty SACK block (left ≥ right)") end
        parts[#parts + 1] = string.format("sack=[%d,%d)", left, right)
        off = off + 4
    end
    local plen = rl - off
    if plen > 0 then parts[#parts + 1] = "len=" .. plen end
    rest(tvb, rl, t, fe.payload, off)
    set_info(pinfo, "E2TCP", string.format("E2TCP id=%d %s", tvb:range(1, 1):uint(), table.concat(parts, " ")))
end

----------------------------------------------------------------------------
-- RCP
----------------------------------------------------------------------------

local function dissect_rcp(tvb, pinfo, tree, rl)
    local t = tree:add(p_rcp, tvb:range(0))
    pinfo.cols.protocol:set("RCP")
    if not need(tvb, rl, t, 0, 20, "RCP header") then return end
    t:add(fr.src_port, tvb:range(0, 2))
    t:add(fr.dst_port, tvb:range(2, 2))
    t:add(fr.seq, tvb:range(4, 4))
    t:add(fr.ack, tvb:range(8, 4))
    t:add(fr.doff, tvb:range(12, 1))
    t:add(fr.reserved_bits, tvb:range(12, 1))
    local doff = math.floor(tvb:range(12, 1):uint() / 16)
    local flags = tvb:range(13, 1):uint()
    local ft = t:add(fr.flags, tvb:range(13, 1))
    for _, fl in ipairs({ fr.eln, fr.pul, fr.req, fr.ackf, fr.lim, fr.rst, fr.syn, fr.fin }) do
        ft:add(fl, tvb:range(13, 1))
    end
    t:add(fr.length, tvb:range(14, 2))
    t:add(fr.window, tvb:range(16, 2))
    t:add(fr.reserved, tvb:range(18, 2))
    local names = {}
    for _, p in ipairs({ { 0x02, "SYN" }, { 0x20, "REQ" }, { 0x40, "PUL" }, { 0x10, "ACK" },
        { 0x08, "LIM" }, { 0x04, "RST" }, { 0x01, "FIN" } }) do
        if has(flags, p[1]) then names[#names + 1] = p[2] end
    end
    local info = string.format("RCP [%s] seq=%d ack=%d", table.concat(names, ","),
        tvb:range(4, 4):uint(), tvb:range(8, 4):uint())
    if has(flags, 0x20) and has(flags, 0x40) then
        info = info .. " len=" .. tvb:range(14, 2):uint()
    end
    if doff ~= 5 and doff ~= 7 and doff ~= 9 and doff ~= 11 then
        malformed(t, "RCP data offset " .. doff .. " not in {5, 7, 9, 11}")
        set_info(pinfo, "RCP", info)
        return
    end
    if tvb:range(12, 1):uint() % 16 ~= 0 or has(flags, 0x80) or tvb:range(18, 2):uint() ~= 0 then
        malformed(t, "RCP reserved bits or the ELN bit set")
    end
    local hlen = doff * 4
    local plen = rl - hlen
    local req, pul = has(flags, 0x20), has(flags, 0x40)
    local length = tvb:range(14, 2):uint()
    if pul and not req then malformed(t, "RCP PUL without REQ") end
    if req and (has(flags, 0x02) or has(flags, 0x08) or plen > 0) then
        malformed(t, "RCP REQ with SYN, LIM or payload")
    end
    if pul and length == 0 then malformed(t, "RCP PUL with length 0") end
    if not req and (doff ~= 5 or length ~= 0) then
        malformed(t, "RCP request blocks or a length on a packet that is not a REQ")
    end
    if has(flags, 0x02) and plen > 0 then malformed(t, "RCP SYN with payload") end
    if need(tvb, rl, t, 20, hlen - 20, "RCP request blocks") then
        for off = 20, hlen - 8, 8 do
            local s, e = tvb:range(off, 4):uint(), tvb:range(off + 4, 4):uint()
            local bt = t:add(tvb:range(off, 8), string.format("Request block [%d, %d)", s, e))
            bt:add(fr.block_start, tvb:range(off, 4))
            bt:add(fr.block_end, tvb:range(off + 4, 4))
            local span = (e - s) % 4294967296
            if span == 0 or span > 2147483648 then
                malformed(bt, "request block empty or longer than 2^31")
            end
        end
        if plen > 0 then info = info .. " data=" .. plen end
        rest(tvb, rl, t, fr.payload, hlen)
    end
    set_info(pinfo, "RCP", info)
end

----------------------------------------------------------------------------
-- JTP
----------------------------------------------------------------------------

local function dissect_jtp(tvb, pinfo, tree, rl)
    local t = tree:add(p_jtp, tvb:range(0))
    pinfo.cols.protocol:set("JTP")
    if not need(tvb, rl, t, 0, 4, "JTP header") then return end
    local b0 = tvb:range(0, 1):uint()
    local ver, kind = math.floor(b0 / 16), b0 % 16
    local flags = tvb:range(1, 1):uint()
    local paper = has(flags, 0x80)
    t:add(fj.version, tvb:range(0, 1))
    t:add(fj.kind, tvb:range(0, 1))
    local ft = t:add(fj.flags, tvb:range(1, 1))
    ft:add(fj.paper, tvb:range(1, 1))
    if kind == 1 then
        ft:add(fj.local_, tvb:range(1, 1))
        ft:add(fj.retx, tvb:range(1, 1))
    else
        ft:add(fj.urgent, tvb:range(1, 1))
    end
    ft:add(fj.fin, tvb:range(1, 1))
    t:add(fj.layout, paper and "paper" or "compact"):set_generated()
    t:add(fj.flow_id, tvb:range(2, 2))
    if ver ~= 1 then
        malformed(t, "JTP version " .. ver)
        return
    end
    local flow = tvb:range(2, 2):uint()
    if kind == 1 then
        local hlen = paper and 28 or 24
        if not need(tvb, rl, t, 0, hlen, "JTP data header") then return end
        local seq = tvb:range(4, 4):uint()
        t:add(fj.seq, tvb:range(4, 4))
        local rate = t:add(fj.available_rate, tvb:range(8, 4))
        if tvb:range(8, 4):uint() == 0xffffffff then rate:append_text(" (not stamped yet)") end
        t:add(fj.energy_budget, tvb:range(12, 4))
        t:add(fj.energy_used, tvb:range(16, 4))
        local lt = t:add(fj.loss_tolerance, tvb:range(20, 2))
        lt:append_text(string.format(" (%.4f)", tvb:range(20, 2):uint() / 65535))
        t:add(fj.hops, tvb:range(22, 1))
        t:add(fj.priority, tvb:range(23, 1))
        if paper then t:add(fj.padding, tvb:range(24, 4)) end
        rest(tvb, rl, t, fj.payload, hlen)
        local marks = {}
        if has(flags, 0x01) then marks[#marks + 1] = "F" end
        if has(flags, 0x02) then marks[#marks + 1] = "R" end
        if has(flags, 0x04) then marks[#marks + 1] = "L" end
        set_info(pinfo, "JTP", string.format("JTP data flow=%d seq=%d hops=%d len=%d%s", flow, seq,
            tvb:range(22, 1):uint(), rl - hlen,
            #marks > 0 and (" [" .. table.concat(marks, ",") .. "]") or ""))
    elseif kind == 2 then
        if not need(tvb, rl, t, 0, 28, "JTP ACK header") then return end
        local cum = tvb:range(4, 4):uint()
        t:add(fj.cum_ack, tvb:range(4, 4))
        t:add(fj.rate, tvb:range(8, 4))
        t:add(fj.ack_energy_budget, tvb:range(12, 4))
        t:add(fj.feedback_period, tvb:range(16, 4))
        t:add(fj.highest, tvb:range(20, 4))
        t:add(fj.snack_count, tvb:range(24, 2))
        t:add(fj.local_count, tvb:range(26, 2))
        local s, l = tvb:range(24, 2):uint(), tvb:range(26, 2):uint()
        local lists = 28 + 4 * (s + l)
        if paper and lists > 200 then
            malformed(t, string.format("paper JTP ACK announces %d entries, at most 43 fit", s + l))
            return
        end
        if paper and not need(tvb, rl, t, 0, 200, "paper JTP ACK (200 bytes)") then return end
        if need(tvb, rl, t, 28, 4 * (s + l), "JTP ACK lists") then
            for i = 0, s - 1 do t:add(fj.snack, tvb:range(28 + 4 * i, 4)) end
            for i = 0, l - 1 do t:add(fj.recovered, tvb:range(28 + 4 * (s + i), 4)) end
            if paper and lists < 200 then t:add(fj.padding, tvb:range(lists, 200 - lists)) end
        end
        set_info(pinfo, "JTP", string.format("JTP ACK flow=%d cum=%d rate=%d snack=%d local=%d%s%s",
            flow, cum, tvb:range(8, 4):uint(), s, l,
            has(flags, 0x02) and " [urgent]" or "", has(flags, 0x01) and " [F]" or ""))
    else
        malformed(t, "JTP kind " .. kind)
    end
end

----------------------------------------------------------------------------
-- Hop
----------------------------------------------------------------------------

local function dissect_hop(tvb, pinfo, tree, rl)
    local t = tree:add(p_hop, tvb:range(0))
    pinfo.cols.protocol:set("Hop")
    if not need(tvb, rl, t, 0, 12, "Hop header") then return end
    local b0 = tvb:range(0, 1):uint()
    local ver, ty = math.floor(b0 / 16), b0 % 16
    local count = tvb:range(2, 2):uint()
    t:add(fh.version, tvb:range(0, 1))
    t:add(fh.type, tvb:range(0, 1))
    t:add(fh.ttl, tvb:range(1, 1))
    if ty == 0 then
        t:add(fh.packet_num, tvb:range(2, 2))
    elseif ty >= 1 and ty <= 3 then
        t:add(fh.frames, tvb:range(2, 2))
    else
        t:add(fh.count, tvb:range(2, 2))
    end
    t:add(fh.flow_id, tvb:range(4, 4))
    t:add(fh.block_num, tvb:range(8, 4))
    if ver ~= 1 then
        malformed(t, "Hop version " .. ver)
        return
    end
    local flow, block = tvb:range(4, 4):uint(), tvb:range(8, 4):uint()
    local body = rl - 12
    local info = string.format("Hop %s flow=%d block=%d", name_of(hop_types, ty), flow, block)
    if ty == 0 then
        info = info .. string.format(" packet=%d len=%d", count, body)
        rest(tvb, rl, t, fh.data, 12)
    elseif ty == 1 or ty == 3 then
        if count == 0 then malformed(t, "zero frames") end
        if need(tvb, rl, t, 12, 4, "block length") then
            local blen = tvb:range(12, 4):uint()
            t:add(fh.block_len, tvb:range(12, 4))
            if blen < count then malformed(t, "block shorter than its frame count") end
            info = info .. string.format(" frames=%d bytes=%d", count, blen)
            if body > 4 then
                if ty == 3 then
                    malformed(t, "virtual BSYN with data")
                elseif body - 4 ~= blen then
                    malformed(t, "micro-block of the wrong length")
                else
                    info = info .. " micro-block"
                end
                rest(tvb, rl, t, fh.micro_block, 16)
            end
        end
        if ty == 3 then info = info .. " ttl=" .. tvb:range(1, 1):uint() end
    elseif ty == 2 then
        if count == 0 then malformed(t, "zero frames") end
        local blen = math.ceil(count / 8)
        if body > blen then malformed(t, "bytes after the bitmap") end
        if need(tvb, rl, t, 12, blen, "BACK bitmap") and blen > 0 then
            local bi = t:add(fh.bitmap, tvb:range(12, blen))
            local held = 0
            local list = {}
            for i = 0, count - 1 do
                local byte = tvb:range(12 + math.floor(i / 8), 1):uint()
                if has(byte, 2 ^ (7 - i % 8)) then
                    held = held + 1
                    if #list < 32 then list[#list + 1] = tostring(i) end
                end
            end
            local last = tvb:range(12 + blen - 1, 1):uint()
            local pad = blen * 8 - count
            if pad > 0 and last % (2 ^ pad) ~= 0 then malformed(bi, "padding bits set") end
            bi:append_text(" (held: " .. table.concat(list, ",") .. (held > #list and ",…" or "") .. ")")
            t:add(fh.held, tvb:range(12, blen), held):set_generated()
            info = info .. string.format(" held=%d/%d", held, count)
        end
    elseif ty >= 4 and ty <= 6 then
        if count ~= 0 or body ~= 0 then malformed(t, "count or body on a type without one") end
    else
        malformed(t, "Hop type " .. ty)
    end
    set_info(pinfo, "Hop", info)
end

----------------------------------------------------------------------------
-- nackrate
----------------------------------------------------------------------------

local function dissect_nackrate(tvb, pinfo, tree, rl)
    local t = tree:add(p_nr, tvb:range(0))
    pinfo.cols.protocol:set("nackrate")
    if not need(tvb, rl, t, 0, 8, "nackrate prefix") then return end
    local b0 = tvb:range(0, 1):uint()
    local ver, kind = math.floor(b0 / 16), b0 % 16
    local flags = tvb:range(1, 1):uint()
    t:add(fn.version, tvb:range(0, 1))
    t:add(fn.kind, tvb:range(0, 1))
    local fi = t:add(fn.flags, tvb:range(1, 1))
    local ci = t:add(fn.checksum, tvb:range(2, 2))
    t:add(fn.conn_id, tvb:range(4, 4))
    if ver ~= 1 then malformed(t, "nackrate version " .. ver) return end
    if tvb:len() == rl and internet_checksum(tvb) ~= 0 then
        ci:add_proto_expert_info(e_checksum, "bad checksum")
    end
    local info
    if kind == 1 then
        if flags > 3 then malformed(fi, "unknown flags") end
        if not need(tvb, rl, t, 0, 20, "DATA header") then return end
        t:add(fn.packet, tvb:range(8, 4))
        t:add(fn.offset, tvb:range(12, 8))
        if rl == 20 and not has(flags, 1) then malformed(t, "DATA without payload or FIN") end
        rest(tvb, rl, t, fn.data, 20)
        info = string.format("nackrate DATA pn=%d off=%s len=%d%s%s", tvb:range(8, 4):uint(),
            tostring(tvb:range(12, 8):uint64()), rl - 20,
            has(flags, 2) and " RETX" or "", has(flags, 1) and " FIN" or "")
    elseif kind == 2 then
        if flags > 1 then malformed(fi, "unknown flags") end
        if not need(tvb, rl, t, 0, 42, "ACK header") then return end
        t:add(fn.largest, tvb:range(8, 4))
        t:add(fn.ack_delay, tvb:range(12, 4))
        t:add(fn.rtime, tvb:range(16, 4))
        t:add(fn.rbytes, tvb:range(20, 4))
        t:add(fn.rpackets, tvb:range(24, 4))
        t:add(fn.cumulative, tvb:range(28, 8))
        t:add(fn.span, tvb:range(36, 4))
        t:add(fn.ranges, tvb:range(40, 2))
        local n = tvb:range(40, 2):uint()
        if rl ~= 42 + 8 * n then malformed(t, "length does not match the range count") end
        for i = 0, n - 1 do
            local off = 42 + 8 * i
            if not need(tvb, rl, t, off, 8, "missing range") then break end
            local item = t:add(fn.range, tvb:range(off, 8))
            item:append_text(string.format(" (+%d, %d bytes)", tvb:range(off, 4):uint(),
                tvb:range(off + 4, 4):uint()))
        end
        info = string.format("nackrate ACK cum=%s span=%d ranges=%d largest=%d%s",
            tostring(tvb:range(28, 8):uint64()), tvb:range(36, 4):uint(), n,
            tvb:range(8, 4):uint(), has(flags, 1) and " FIN" or "")
    else
        malformed(t, "nackrate kind " .. kind)
        return
    end
    set_info(pinfo, "nackrate", info)
end

----------------------------------------------------------------------------
-- The agent packet inside a runtime datagram, by protocol code
----------------------------------------------------------------------------

local tcp_dissector = Dissector.get("tcp")
local ip_dissector = Dissector.get("ip")
local data_dissector = Dissector.get("data")

-- Hands `tvb` to one of Wireshark's dissectors. Its exception on a bad
-- packet (which it has already marked "Malformed Packet") reaches Lua as
-- an error: keep it from becoming a Lua error, and say so.
local function call(dissector, tvb, pinfo, tree, what)
    local ok = pcall(function() dissector:call(tvb, pinfo, tree) end)
    if not ok then
        tree:add_proto_expert_info(e_malformed, what .. ": Wireshark's dissector rejected it")
    end
end

-- The agent packet: `tvb` holds what was captured of it, `rl` its length.
local function dissect_agent(format, tvb, pinfo, tree, rl)
    if rl == 0 then return end
    if format == "tcp" then
        -- Wireshark's own TCP dissector (the runtime sends no IPv4 header;
        -- the UDP datagram's addresses stand in for it). It reads the
        -- segment's length from the Tvb, so it gets only whole segments.
        if tvb:len() == rl then
            call(tcp_dissector, tvb, pinfo, tree, "TCP segment")
        else
            rest(tvb, rl, tree, f.agent, 0)
            tree:add_proto_expert_info(e_cut, "TCP segment cut by the capture: not decoded")
        end
    elseif format == "udp" then
        dissect_udp(tvb, pinfo, tree, rl)
    elseif format == "wwp" then
        dissect_wwp(tvb, pinfo, tree, rl)
    elseif format == "e2tcp" then
        dissect_e2tcp(tvb, pinfo, tree, rl, nil)
    elseif format == "rcp" then
        dissect_rcp(tvb, pinfo, tree, rl)
    elseif format == "jtp" then
        dissect_jtp(tvb, pinfo, tree, rl)
    elseif format == "hop" then
        dissect_hop(tvb, pinfo, tree, rl)
    elseif format == "nackrate" then
        dissect_nackrate(tvb, pinfo, tree, rl)
    else
        rest(tvb, rl, tree, f.agent, 0)
    end
end

----------------------------------------------------------------------------
-- Runtime framing: versions 2 and 3 (plain), 4 and 5 (sealed)
----------------------------------------------------------------------------

local function dissect_header(tvb, t)
    t:add(f.magic, tvb:range(0, 2))
    t:add(f.version, tvb:range(2, 1))
    t:add(f.kind, tvb:range(3, 1))
    t:add(f.protocol, tvb:range(4, 1))
    local r = t:add(f.reserved, tvb:range(5, 3))
    if tvb:range(5, 3):uint() ~= 0 then malformed(r, "reserved bytes not zero") end
    local c = t:add(f.conn_id, tvb:range(8, 8))
    if tvb:range(8, 8):uint64() == UInt64(0) then malformed(c, "connection id 0") end
end

-- The ports of the last route header seen, for `tcp-or-e2tcp`: a TCP
-- segment's own ports are the route's (the agent's address), where E2TCP's
-- header starts with other fields.
local route_ports = nil

local function dissect_route(tvb, t, off)
    route_ports = { tvb:range(off + 4, 2):uint(), tvb:range(off + 10, 2):uint() }
    local rt = t:add(tvb:range(off, 16), "Route header")
    rt:add(f.route_src_node, tvb:range(off, 4))
    rt:add(f.route_src_port, tvb:range(off + 4, 2))
    rt:add(f.route_dst_node, tvb:range(off + 6, 4))
    rt:add(f.route_dst_port, tvb:range(off + 10, 2))
    rt:add(f.route_hop_limit, tvb:range(off + 12, 1))
    local r = rt:add(f.route_reserved, tvb:range(off + 13, 3))
    if tvb:range(off + 13, 3):uint() ~= 0 then malformed(r, "reserved bytes not zero") end
    rt:append_text(string.format(": %d:%d → %d:%d, hop limit %d", tvb:range(off, 4):uint(),
        tvb:range(off + 4, 2):uint(), tvb:range(off + 6, 4):uint(),
        tvb:range(off + 10, 2):uint(), tvb:range(off + 12, 1):uint()))
end

-- The kind's payload in plain framing (v2/v3), starting at `off`.
local function dissect_payload(tvb, rl, pinfo, tree, t, kind, code, off)
    local remaining = rl - off
    local format = protocol_format[code]
    if format == "tcp-or-e2tcp" then
        local at = kind == 1 and off + 16 or off
        local tcp = route_ports ~= nil and tvb:len() >= at + 4
            and tvb:range(at, 2):uint() == route_ports[1]
            and tvb:range(at + 2, 2):uint() == route_ports[2]
        format = tcp and "tcp" or "e2tcp"
    end
    if kind == 1 then -- Hello: token, agent packet
        if not need(tvb, rl, t, off, 16, "Hello token") then return "" end
        t:add(f.token, tvb:range(off, 16))
        if remaining > 16 and tvb:len() > off + 16 then
            dissect_agent(format, tvb:range(off + 16):tvb(), pinfo, tree, remaining - 16)
        end
    elseif kind == 2 then -- Data: the agent packet
        if remaining > 0 and tvb:len() > off then
            dissect_agent(format, tvb:range(off):tvb(), pinfo, tree, remaining)
        end
    elseif kind == 3 then -- Close: empty (client) or the verdict (server)
        if remaining == 0 then return "(done)" end
        if not need(tvb, rl, t, off, 41, "verdict") then return "" end
        local v = tvb:range(off, 1):uint()
        local vi = t:add(f.verdict, tvb:range(off, 1))
        if verdict_names[v] == nil then malformed(vi, "unknown verdict") end
        t:add(f.stream_bytes, tvb:range(off + 1, 8))
        t:add(f.close_sha, tvb:range(off + 9, 32))
        if remaining > 41 then
            if remaining > 41 + 200 then malformed(t, "reason longer than 200 bytes") end
            if tvb:len() > off + 41 then
                t:add(f.close_reason, tvb:range(off + 41), tvb:range(off + 41):string(ENC_UTF_8))
            end
        end
        return string.format("verdict=%s bytes=%s", name_of(verdict_names, v),
            tostring(tvb:range(off + 1, 8):uint64()))
    elseif kind == 4 then -- Refused: reason
        if remaining > 200 then malformed(t, "reason longer than 200 bytes") end
        if remaining > 0 and tvb:len() > off then
            local s = tvb:range(off):string(ENC_UTF_8)
            t:add(f.refused_reason, tvb:range(off), s)
            return "\"" .. s .. "\""
        end
    elseif kind == 5 then -- Retry: token
        if need(tvb, rl, t, off, 16, "Retry token") then t:add(f.token, tvb:range(off, 16)) end
    elseif kind == 6 then -- Query: token, size, SHA-256, name
        if not need(tvb, rl, t, off, 16 + 8 + 32 + 1, "Query") then return "" end
        t:add(f.token, tvb:range(off, 16))
        t:add(f.query_size, tvb:range(off + 16, 8))
        t:add(f.query_sha, tvb:range(off + 24, 32))
        local name = tvb:range(off + 56):string(ENC_UTF_8)
        t:add(f.query_name, tvb:range(off + 56), name)
        if remaining - 56 > 255 then malformed(t, "name longer than 255 bytes") end
        return string.format("\"%s\" size=%s", name, tostring(tvb:range(off + 16, 8):uint64()))
    elseif kind == 7 then -- Offer: prefix length, SHA-256
        if not need(tvb, rl, t, off, 40, "Offer") then return "" end
        t:add(f.offer_prefix, tvb:range(off, 8))
        t:add(f.offer_sha, tvb:range(off + 8, 32))
        return "prefix=" .. tostring(tvb:range(off, 8):uint64())
    end
    return ""
end

-- Link frames (version 6, docs/wire.md "Link frames"): a host's mark on
-- its link to a neighbour and the neighbour's report; 32 bytes.
local function dissect_link(tvb, pinfo, t, rl)
    t:add(f.magic, tvb:range(0, 2))
    t:add(f.version, tvb:range(2, 1))
    local kind = tvb:range(3, 1):uint()
    local ki = t:add(f.link_kind, tvb:range(3, 1))
    if kind ~= 1 and kind ~= 2 then malformed(ki, "unknown link frame kind") end
    local ri = t:add(f.reserved, tvb:range(4, 4))
    if tvb:range(4, 4):uint() ~= 0 then malformed(ri, "reserved bytes not zero") end
    if not need(tvb, rl, t, 8, 24, "link frame") then return tvb:len() end
    if rl ~= 32 then malformed(t, "link frame of " .. rl .. " bytes (32 expected)") end
    t:add(f.link_mark, tvb:range(8, 8))
    t:add(f.link_sent, tvb:range(16, 8))
    t:add(f.link_heard, tvb:range(24, 8))
    local name = kind == 1 and "mark" or "report"
    local info = string.format("v6 link %s %s sent=%s", name, tostring(tvb:range(8, 8):uint64()),
        tostring(tvb:range(16, 8):uint64()))
    if kind == 2 then info = info .. " heard=" .. tostring(tvb:range(24, 8):uint64()) end
    t:append_text(", v6 link " .. name)
    set_info(pinfo, "joulenet", info)
    return tvb:len()
end

-- Is this a joulenet runtime datagram? (magic, version 2–5, known kind)
local function looks_like_runtime(tvb)
    if tvb:len() < 5 then return false end
    if tvb:range(0, 2):uint() ~= 0x4a4e then return false end
    local v = tvb:range(2, 1):uint()
    local k = tvb:range(3, 1):uint()
    return (v >= 2 and v <= 5 and k >= 1 and k <= 7) or (v == 6 and (k == 1 or k == 2))
end

function p_jn.dissector(tvb, pinfo, tree)
    -- Called by Wireshark's UDP dissector: the Tvb knows its real length.
    local rl = tvb:reported_length_remaining(0)
    local len = rl
    pinfo.cols.protocol:set("joulenet")
    local t = tree:add(p_jn, tvb:range(0))
    if not need(tvb, rl, t, 0, 16, "joulenet header") then return tvb:len() end
    if tvb:range(0, 2):uint() ~= 0x4a4e then
        malformed(t, "wrong magic (not \"JN\")")
        return tvb:len()
    end
    if tvb:range(2, 1):uint() == 6 then
        return dissect_link(tvb, pinfo, t, rl)
    end
    dissect_header(tvb, t)
    local version = tvb:range(2, 1):uint()
    local kind = tvb:range(3, 1):uint()
    local code = tvb:range(4, 1):uint()
    local conn = tvb:range(8, 8):uint64()
    local kname = name_of(kind_names, kind)
    if kind_names[kind] == nil then malformed(t, "unknown kind") end
    if protocol_names[code] == nil then malformed(t, "unknown protocol code") end
    local off = 16
    local routed = version == 3 or version == 5
    local sealed = version == 4 or version == 5
    if version < 2 or version > 5 then
        malformed(t, "unknown version " .. version)
        return tvb:len()
    end
    t:append_text(string.format(", v%d %s, %s, connection %s%s", version, kname,
        name_of(protocol_names, code), conn:tohex(), sealed and ", sealed" or ""))
    route_ports = nil
    if routed then
        if not need(tvb, rl, t, off, 16, "route header") then return tvb:len() end
        dissect_route(tvb, t, off)
        off = off + 16
    end
    local info = string.format("v%d %s %s conn=%s", version, kname, name_of(protocol_names, code), conn:tohex())
    if sealed then
        local opens = kind == 1 or kind == 6
        local fixed = 8 + (opens and 32 or 0)
        if not need(tvb, rl, t, off, fixed + 16, "sealed framing (packet number, tag)") then
            set_info(pinfo, "joulenet", info)
            return tvb:len()
        end
        local pn = tvb:range(off, 8):uint64()
        t:add(f.pn, tvb:range(off, 8))
        off = off + 8
        if opens then
            t:add(f.nonce, tvb:range(off, 16))
            t:add(f.sealed_token, tvb:range(off + 16, 16))
            off = off + 32
        end
        local ct = len - off - 16
        if ct > 0 then
            if need(tvb, rl, t, off, ct, "ciphertext") then
                t:add(f.ciphertext, tvb:range(off, ct))
            end
        end
        if need(tvb, rl, t, len - 16, 16, "tag") then
            t:add(f.tag, tvb:range(len - 16, 16))
        end
        set_info(pinfo, "joulenet", string.format("%s pn=%s encrypted=%d", info, tostring(pn), ct))
        return tvb:len()
    end
    local more = dissect_payload(tvb, rl, pinfo, tree, t, kind, code, off)
    -- An agent dissector replaced the columns: keep the framing in front.
    local inner = tostring(pinfo.cols.info)
    if (kind == 1 or kind == 2) and inner ~= "" and not inner:find("^v%d") then
        pinfo.cols.info:set(info .. " | " .. inner)
        pinfo.cols.protocol:set("joulenet/" .. tostring(pinfo.cols.protocol))
    else
        set_info(pinfo, "joulenet", info .. (more ~= "" and (" " .. more) or ""))
    end
    return tvb:len()
end

local function heuristic(tvb, pinfo, tree)
    if not looks_like_runtime(tvb) then return false end
    p_jn.dissector(tvb, pinfo, tree)
    return true
end

----------------------------------------------------------------------------
-- Simulator captures (LINKTYPE_USER0 with the pseudo-header)
----------------------------------------------------------------------------

local function ip_text(tvb, off)
    return string.format("%d.%d.%d.%d", tvb:range(off, 1):uint(), tvb:range(off + 1, 1):uint(),
        tvb:range(off + 2, 1):uint(), tvb:range(off + 3, 1):uint())
end

-- The synthetic IPv4 header in front of an experimental-protocol frame;
-- returns its length (20) or nil.
local function dissect_ipv4(tvb, pinfo, tree, rl)
    local t = tree:add(p_ip, tvb:range(0, math.min(20, tvb:len())))
    if not need(tvb, rl, t, 0, 20, "IPv4 header") then return nil end
    t:add(fi.version, tvb:range(0, 1))
    t:add(fi.ihl, tvb:range(0, 1))
    t:add(fi.tos, tvb:range(1, 1))
    t:add(fi.total_len, tvb:range(2, 2))
    t:add(fi.ident, tvb:range(4, 2))
    t:add(fi.frag, tvb:range(6, 2))
    t:add(fi.ttl, tvb:range(8, 1))
    t:add(fi.proto, tvb:range(9, 1))
    t:add(fi.checksum, tvb:range(10, 2))
    t:add(fi.src, tvb:range(12, 4))
    t:add(fi.dst, tvb:range(16, 4))
    local proto = tvb:range(9, 1):uint()
    t:append_text(string.format(", %s → %s, protocol %d%s", ip_text(tvb, 12), ip_text(tvb, 16),
        proto, (proto == 6 or proto == 17) and "" or " (experimental: the format is joulenet's)"))
    if tvb:range(0, 1):uint() ~= 0x45 then
        malformed(t, "not IPv4 with a 20-byte header")
        return nil
    end
    pinfo.src = tvb:range(12, 4):ipv4()
    pinfo.dst = tvb:range(16, 4):ipv4()
    return 20
end

-- node n is 10.x.y.z with (x, y, z) the bytes of n + 1 (crates/sim/src/pcap.rs).
local function node_address(n)
    local k = n + 1
    return Address.ip(string.format("10.%d.%d.%d", math.floor(k / 65536) % 256,
        math.floor(k / 256) % 256, k % 256))
end

function p_sim.dissector(tvb, pinfo, tree)
    -- The record's original length (the pseudo-header and the whole frame).
    local rl = tvb:reported_length_remaining(0)
    if tvb:len() < 2 or tvb:range(0, 2):uint() ~= 0x4a53 then
        -- Another program's LINKTYPE_USER0 capture: not ours.
        data_dissector:call(tvb, pinfo, tree)
        return tvb:len()
    end
    pinfo.cols.protocol:set("joulenet-sim")
    local t = tree:add(p_sim, tvb:range(0, math.min(20, tvb:len())))
    if not need(tvb, rl, t, 0, 20, "simulator pseudo-header") then return tvb:len() end
    t:add(fs.magic, tvb:range(0, 2))
    local vi = t:add(fs.version, tvb:range(2, 1))
    t:add(fs.format, tvb:range(3, 1))
    t:add(fs.network, tvb:range(4, 1))
    t:add(fs.reserved, tvb:range(5, 3))
    t:add(fs.src_node, tvb:range(8, 4))
    t:add(fs.src_port, tvb:range(12, 2))
    t:add(fs.dst_node, tvb:range(14, 4))
    t:add(fs.dst_port, tvb:range(18, 2))
    local format = tvb:range(3, 1):uint()
    local net = tvb:range(4, 1):uint()
    local src, dst = tvb:range(8, 4):uint(), tvb:range(14, 4):uint()
    t:append_text(string.format(", %s, node %d:%d → node %d:%d", name_of(format_names, format),
        src, tvb:range(12, 2):uint(), dst, tvb:range(18, 2):uint()))
    if tvb:range(2, 1):uint() ~= 1 then
        malformed(vi, "unknown pseudo-header version")
        return tvb:len()
    end
    pinfo.src = node_address(src)
    pinfo.dst = node_address(dst)
    pinfo.cols.info:set(string.format("%s node %d → node %d", name_of(format_names, format), src, dst))
    if rl <= 20 or tvb:len() <= 20 then return tvb:len() end
    local frame = tvb:range(20):tvb()
    local frame_rl = rl - 20
    if (format == 1 or format == 2) and net == 4 then
        -- Real TCP/UDP over IPv4: Wireshark's own dissectors. The simulator
        -- keeps these frames whole; a cut one would read as a bad length.
        if frame:len() == frame_rl then
            call(ip_dissector, frame, pinfo, tree, "IPv4 packet")
        else
            dissect_ipv4(frame, pinfo, tree, frame_rl)
            t:add_proto_expert_info(e_cut, "TCP/UDP packet cut by the capture: transport not decoded")
        end
        return tvb:len()
    end
    if format == 0 then
        rest(frame, frame_rl, tree, fs.lsa, 0)
        return tvb:len()
    end
    local body, body_rl = frame, frame_rl
    if net == 4 then
        local n = dissect_ipv4(frame, pinfo, tree, frame_rl)
        if n == nil then return tvb:len() end
        if frame_rl <= 20 or frame:len() <= 20 then return tvb:len() end
        body, body_rl = frame:range(20):tvb(), frame_rl - 20
    elseif net ~= 0 then
        malformed(t, "unknown network header " .. net)
        return tvb:len()
    end
    if format == 3 then
        dissect_wwp(body, pinfo, tree, body_rl)
    elseif format == 4 then
        dissect_e2tcp(body, pinfo, tree, body_rl,
            net == 4 and "uncompressed (behind IPv4)" or "compact (no network header)")
    elseif format == 5 then
        dissect_rcp(body, pinfo, tree, body_rl)
    elseif format == 6 then
        dissect_jtp(body, pinfo, tree, body_rl)
    elseif format == 7 then
        dissect_hop(body, pinfo, tree, body_rl)
    elseif format == 8 then
        dissect_nackrate(body, pinfo, tree, body_rl)
    else
        malformed(t, "unknown format " .. format)
    end
    return tvb:len()
end

----------------------------------------------------------------------------
-- Registration
----------------------------------------------------------------------------

p_jn.prefs.udp_ports = Pref.range("UDP ports", tostring(RUNTIME_PORT),
    "UDP ports the joulenet runtime uses (joulenet recv/serve --bind; default 5201)", 65535)
p_jn.prefs.heuristic = Pref.bool("Find joulenet datagrams on any UDP port", true,
    "Recognise the runtime's datagrams by their header (magic \"JN\", version 2-5) on other ports")

local udp_table = DissectorTable.get("udp.port")
local registered_ports = tostring(RUNTIME_PORT)
udp_table:add(registered_ports, p_jn)

local sim_prefs_changed -- defined below, with the simulator's ports

function p_jn.prefs_changed()
    sim_prefs_changed()
    if registered_ports ~= tostring(p_jn.prefs.udp_ports) then
        udp_table:remove(registered_ports, p_jn)
        registered_ports = tostring(p_jn.prefs.udp_ports)
        if registered_ports ~= "" then udp_table:add(registered_ports, p_jn) end
    end
end

p_jn:register_heuristic("udp", function(tvb, pinfo, tree)
    if not p_jn.prefs.heuristic then return false end
    return heuristic(tvb, pinfo, tree)
end)

local encaps = wtap_encaps or wtap
DissectorTable.get("wtap_encap"):add(encaps.USER0, p_sim)

-- The simulator's flows use TCP/UDP ports 5000 + flow index, which
-- Wireshark gives to other protocols (TCP 5000: GSM IPA, which then reads
-- application bytes as "RSL MODE MODIFY REQuest"; UDP 5000: TAPA; UDP
-- 5001: CPFI; TCP 5010: ipsictl). The simulator's payload is application
-- data: show it as such on these ports (preference "joulenet.sim.ports";
-- empty it to give the ports back).
local SIM_PORTS = "5000-5015"
p_jn.prefs.sim_ports = Pref.range("Simulator flow ports (TCP and UDP)", SIM_PORTS,
    "TCP/UDP ports of simulated flows, decoded as plain data instead of GSM IPA, TAPA, ...", 65535)

-- The ports of a range string ("5000-5015,6000").
local function ports_of(range)
    local out = {}
    for part in string.gmatch(range, "[^,]+") do
        local a, b = string.match(part, "^%s*(%d+)%s*%-%s*(%d+)%s*$")
        if a == nil then
            a = string.match(part, "^%s*(%d+)%s*$")
            b = a
        end
        if a ~= nil then
            for port = tonumber(a), math.min(tonumber(b), 65535) do out[#out + 1] = port end
        end
    end
    return out
end

local claimed = {} -- { table, port, the dissector it had }
local function claim_sim_ports(range)
    for _, c in ipairs(claimed) do
        if c[3] ~= nil then c[1]:add(c[2], c[3]) else c[1]:remove(c[2], data_dissector) end
    end
    claimed = {}
    for _, name in ipairs({ "tcp.port", "udp.port" }) do
        local tbl = DissectorTable.get(name)
        for _, port in ipairs(ports_of(range)) do
            if not (name == "udp.port" and port == RUNTIME_PORT) then
                claimed[#claimed + 1] = { tbl, port, tbl:get_dissector(port) }
                tbl:add(port, data_dissector)
            end
        end
    end
end
local sim_ports = SIM_PORTS
claim_sim_ports(sim_ports)

function sim_prefs_changed()
    if sim_ports ~= tostring(p_jn.prefs.sim_ports) then
        sim_ports = tostring(p_jn.prefs.sim_ports)
        claim_sim_ports(sim_ports)
    end
end
