// ns-3 reference for joulenet's 802.11b medium with the `ns3` TCP profile
// (issue 16): a TCP bulk transfer over an ad hoc 802.11b chain of `hops`
// hops, nodes 200 m apart on a line, static routes along the line, 11 Mbit/s
// data and ACKs at the highest basic rate (2 Mbit/s). Reception is a disc:
// RangePropagationLossModel delivers within `range` at full power and
// nothing beyond, so the transmission, carrier-sense and interference
// ranges are all `range` (the joulenet scenario sets all three alike).
// ARP caches are filled beforehand (joulenet has no ARP). Prints one CSV
// row: hops,seed,bytes,completion_s,wall_s,retransmissions.
// Built and run by validation/ns3/run.sh; the matching joulenet scenario is
// validation/ns3/wifi-chain.toml.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/propagation-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/wifi-module.h"

#include <chrono>
#include <cstdio>

using namespace ns3;

namespace
{
uint64_t g_target = 0;
uint64_t g_received = 0;
double g_done = -1;
uint32_t g_retx = 0;

void
OnRx(Ptr<const Packet> p, const Address&)
{
    g_received += p->GetSize();
    if (g_done < 0 && g_received >= g_target)
    {
        g_done = Simulator::Now().GetSeconds();
        Simulator::Stop();
    }
}

void
OnRetransmission(Ptr<const Packet>, const TcpHeader&, const Address&, const Address&,
                 Ptr<const TcpSocketBase>)
{
    ++g_retx;
}

void
HookSocket(Ptr<Application> app)
{
    Ptr<Socket> s = DynamicCast<BulkSendApplication>(app)->GetSocket();
    s->TraceConnectWithoutContext("Retransmission", MakeCallback(&OnRetransmission));
}
} // namespace

int
main(int argc, char* argv[])
{
    auto wallStart = std::chrono::steady_clock::now();
    uint32_t hops = 4;
    uint32_t seed = 1;
    uint64_t bytes = 1000000;
    double spacing = 200;
    double range = 250;
    uint32_t mss = 1000;
    uint32_t queue = 50;
    CommandLine cmd(__FILE__);
    cmd.AddValue("hops", "hops of the chain", hops);
    cmd.AddValue("seed", "run number", seed);
    cmd.AddValue("bytes", "transfer size", bytes);
    cmd.AddValue("spacing", "distance between neighbours, m", spacing);
    cmd.AddValue("range", "transmission = carrier-sense = interference range, m", range);
    cmd.AddValue("mss", "segment size", mss);
    cmd.AddValue("queue", "interface queue, packets", queue);
    cmd.Parse(argc, argv);
    g_target = bytes;

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::TcpNewReno"));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(256 * 1024));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1024 * 1024));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    // joulenet's interface queue: `queue` frames, no deadline (ns-3 drops
    // frames older than 500 ms by default).
    Config::SetDefault("ns3::WifiMacQueue::MaxSize",
                       QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queue)));
    Config::SetDefault("ns3::WifiMacQueue::MaxDelay", TimeValue(Seconds(1000)));

    NodeContainer nodes;
    nodes.Create(hops + 1);
    MobilityHelper mobility;
    Ptr<ListPositionAllocator> pos = CreateObject<ListPositionAllocator>();
    for (uint32_t i = 0; i <= hops; ++i)
    {
        pos->Add(Vector(i * spacing, 0, 0));
    }
    mobility.SetPositionAllocator(pos);
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.Install(nodes);

    YansWifiChannelHelper channel;
    channel.SetPropagationDelay("ns3::ConstantSpeedPropagationDelayModel");
    channel.AddPropagationLoss("ns3::RangePropagationLossModel", "MaxRange", DoubleValue(range));
    YansWifiPhyHelper phy;
    phy.SetChannel(channel.Create());
    WifiHelper wifi;
    wifi.SetStandard(WIFI_STANDARD_80211b);
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                 "DataMode",
                                 StringValue("DsssRate11Mbps"),
                                 "ControlMode",
                                 StringValue("DsssRate2Mbps"));
    WifiMacHelper mac;
    mac.SetType("ns3::AdhocWifiMac");
    NetDeviceContainer devs = wifi.Install(phy, mac, nodes);
    int64_t stream = 100;
    stream += wifi.AssignStreams(devs, stream);

    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.0.0", "255.255.0.0");
    Ipv4InterfaceContainer ifs = addr.Assign(devs);
    TrafficControlHelper().Uninstall(devs);
    NeighborCacheHelper().PopulateNeighborCache();

    // Static routes along the line: toward a higher index via the next
    // node, toward a lower one via the previous.
    Ipv4StaticRoutingHelper routing;
    for (uint32_t i = 0; i <= hops; ++i)
    {
        Ptr<Ipv4StaticRouting> table = routing.GetStaticRouting(nodes.Get(i)->GetObject<Ipv4>());
        for (uint32_t j = 0; j <= hops; ++j)
        {
            if (j == i || j == i + 1 || j + 1 == i)
            {
                continue;
            }
            uint32_t via = j > i ? i + 1 : i - 1;
            table->AddHostRouteTo(ifs.GetAddress(j), ifs.GetAddress(via), 1);
        }
    }

    uint16_t port = 5000;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sink = sinkHelper.Install(nodes.Get(hops));
    sink.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&OnRx));
    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(ifs.GetAddress(hops), port));
    bulk.SetAttribute("MaxBytes", UintegerValue(bytes));
    ApplicationContainer src = bulk.Install(nodes.Get(0));
    sink.Start(Seconds(0));
    src.Start(Seconds(0));
    Simulator::Schedule(NanoSeconds(1), &HookSocket, src.Get(0));
    Simulator::Stop(Seconds(3000));
    Simulator::Run();
    Simulator::Destroy();
    double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    std::printf("%u,%u,%llu,%s,%.4f,%u\n",
                hops,
                seed,
                static_cast<unsigned long long>(g_received),
                g_done < 0 ? "" : std::to_string(g_done).c_str(),
                wall,
                g_retx);
    return 0;
}
