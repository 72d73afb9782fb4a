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
#include "transfer.h"

#include <cstdio>

using namespace ns3;

int
main(int argc, char* argv[])
{
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

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);
    transfer::ConfigureTcp("TcpNewReno", mss, false, 256 * 1024, 1024 * 1024);
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

    transfer::Start(nodes.Get(0), nodes.Get(hops), ifs.GetAddress(hops), bytes, nullptr);
    std::string done = transfer::Run();
    std::printf("%u,%u,%llu,%s,%.4f,%u\n",
                hops,
                seed,
                static_cast<unsigned long long>(transfer::g_received),
                done.c_str(),
                transfer::WallSeconds(),
                transfer::g_retx);
    return 0;
}
