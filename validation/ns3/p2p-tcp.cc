// ns-3 reference for joulenet's `ns3` TCP profile (issue 16): one TCP bulk
// transfer over a point-to-point link that loses packets both ways, either
// at a fixed rate (Bernoulli, RateErrorModel per packet) or in On/Off error
// phases of fixed length (the simulator's `on_off` loss model: Off first).
// Prints one CSV row: tcp,sack,loss,on_s,off_s,seed,bytes,completion_s,
// wall_s,loss_entries,retransmissions,timeouts,fast_recoveries (loss_entries:
// RTO episodes).
// Built and run by validation/ns3/run.sh; the matching joulenet scenarios
// are validation/ns3/p2p-*.toml.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include "transfer.h"

#include <cstdio>
#include <fstream>

using namespace ns3;

namespace
{
// Replays a frame-fate list (joulenet's `trace` loss model, frame form:
// one `0`/`1` per line, `#` comments): the k-th packet this device receives
// is lost iff line k says 1; packets after the last line are delivered. The
// same file on both sides gives ns-3 and joulenet the same loss pattern by
// frame index, so their traces can be diffed up to the first divergence.
class FateListErrorModel : public ErrorModel
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("FateListErrorModel").SetParent<ErrorModel>();
        return tid;
    }

    explicit FateListErrorModel(const std::string& path)
    {
        std::ifstream in(path);
        if (!in)
        {
            NS_FATAL_ERROR("cannot read loss trace " << path);
        }
        std::string line;
        while (std::getline(in, line))
        {
            line = line.substr(0, line.find('#'));
            if (line.find('1') != std::string::npos)
            {
                m_lost.push_back(true);
            }
            else if (line.find('0') != std::string::npos)
            {
                m_lost.push_back(false);
            }
        }
    }

  private:
    bool DoCorrupt(Ptr<Packet>) override
    {
        bool lost = m_next < m_lost.size() && m_lost[m_next];
        ++m_next;
        return lost;
    }

    void DoReset() override
    {
        m_next = 0;
    }

    std::vector<bool> m_lost;
    size_t m_next = 0;
};

// --trace=1: the sender's congestion events on stderr, one per line:
// time_s,event,value (cwnd and ssthresh in bytes, RTO in s, the
// congestion state by name), for diffing against joulenet's series.
bool g_trace = false;

void
TraceValue(const char* what, double value)
{
    if (g_trace)
    {
        std::fprintf(stderr, "%.6f,%s,%g\n", Simulator::Now().GetSeconds(), what, value);
    }
}

void
OnCwnd(uint32_t, uint32_t now)
{
    TraceValue("cwnd", now);
}

void
OnSsthresh(uint32_t, uint32_t now)
{
    TraceValue("ssthresh", now);
}

uint32_t g_lossEntries = 0;
uint32_t g_rtos = 0;
uint32_t g_recoveries = 0;

// ns-3 has no RTO counter: count entries into CA_LOSS from the congestion
// state trace (a TracedValue fires on change only, so a back-off in a row,
// which stays in CA_LOSS, counts once).
void
OnCongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    TraceValue("state", now);
    if (now == TcpSocketState::CA_LOSS)
    {
        ++g_lossEntries;
    }
    if (now == TcpSocketState::CA_RECOVERY)
    {
        ++g_recoveries;
    }
}

// Every retransmission timeout doubles the RTO (ReTxTimeout: min(2·RTO,
// 60 s)); nothing else does, so a doubling counts one timeout.
void
OnRto(Time before, Time after)
{
    TraceValue("rto", after.GetSeconds());
    if (after > before && after == Min(before + before, Seconds(60)))
    {
        ++g_rtos;
    }
}

void
HookSocket(Ptr<Socket> s)
{
    s->TraceConnectWithoutContext("RTO", MakeCallback(&OnRto));
    s->TraceConnectWithoutContext("CongState", MakeCallback(&OnCongState));
    s->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&OnCwnd));
    s->TraceConnectWithoutContext("SlowStartThreshold", MakeCallback(&OnSsthresh));
}

// On/Off phases: Off (no loss) first, then `on` seconds at `rate`, repeating.
void
SetPhase(std::vector<Ptr<RateErrorModel>> models, bool on, double rate, double onS, double offS)
{
    for (auto& m : models)
    {
        m->SetRate(on ? rate : 0.0);
    }
    Simulator::Schedule(Seconds(on ? onS : offS), &SetPhase, models, !on, rate, onS, offS);
}
} // namespace

int
main(int argc, char* argv[])
{
    std::string tcp = "NewReno";
    bool sack = false;
    double loss = 0.0;
    double onS = 0.0;
    double offS = 0.0;
    uint32_t seed = 1;
    uint64_t bytes = 2000000;
    std::string rate = "10Mbps";
    std::string delay = "0.1ms";
    uint32_t queue = 83;
    uint32_t mss = 1460;
    double lossReverse = -1;
    uint32_t sndBuf = 256 * 1024;
    uint32_t rcvBuf = 1024 * 1024;
    CommandLine cmd(__FILE__);
    cmd.AddValue("tcp", "NewReno or Cubic", tcp);
    cmd.AddValue("sack", "SACK on", sack);
    cmd.AddValue("loss", "packet loss rate each way (in On phases if on > 0)", loss);
    cmd.AddValue("on", "On (lossy) phase, s; 0 = constant loss", onS);
    cmd.AddValue("off", "Off (lossless) phase, s", offS);
    cmd.AddValue("seed", "run number", seed);
    cmd.AddValue("bytes", "transfer size", bytes);
    cmd.AddValue("rate", "link rate", rate);
    cmd.AddValue("delay", "one-way propagation delay", delay);
    cmd.AddValue("queue", "interface queue, packets", queue);
    cmd.AddValue("mss", "segment size", mss);
    cmd.AddValue("lossReverse", "loss rate of the ACK direction (default: as `loss`)", lossReverse);
    cmd.AddValue("sndBuf", "send buffer, bytes (joulenet's default 256 KiB)", sndBuf);
    cmd.AddValue("rcvBuf", "receive buffer, bytes (joulenet's default 1 MiB)", rcvBuf);
    std::string lossTrace;
    std::string pcap;
    cmd.AddValue("lossTrace",
                 "frame-fate files PREFIX.fwd (data direction) and PREFIX.rev (ACKs) "
                 "instead of random loss",
                 lossTrace);
    cmd.AddValue("pcap", "write pcap files PREFIX-<node>-<device>.pcap", pcap);
    cmd.AddValue("trace", "congestion events on stderr", g_trace);
    cmd.Parse(argc, argv);

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);
    transfer::ConfigureTcp("Tcp" + tcp, mss, sack, sndBuf, rcvBuf);

    NodeContainer nodes;
    nodes.Create(2);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(rate));
    p2p.SetChannelAttribute("Delay", StringValue(delay));
    p2p.SetQueue("ns3::DropTailQueue<Packet>",
                 "MaxSize",
                 QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, queue)));
    NetDeviceContainer devs = p2p.Install(nodes);

    std::vector<Ptr<RateErrorModel>> models;
    int64_t stream = 100;
    // Device 1 receives the data, device 0 the ACKs.
    for (uint32_t i = 0; i < 2; ++i)
    {
        double p = (i == 0 && lossReverse >= 0) ? lossReverse : loss;
        if (!lossTrace.empty())
        {
            Ptr<ErrorModel> list =
                CreateObject<FateListErrorModel>(lossTrace + (i == 1 ? ".fwd" : ".rev"));
            devs.Get(i)->SetAttribute("ReceiveErrorModel", PointerValue(list));
            continue;
        }
        Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
        em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
        em->SetRate(onS > 0 ? 0.0 : p);
        em->AssignStreams(stream++);
        devs.Get(i)->SetAttribute("ReceiveErrorModel", PointerValue(em));
        models.push_back(em);
    }
    if (onS > 0)
    {
        Simulator::Schedule(Seconds(offS), &SetPhase, models, true, loss, onS, offS);
    }

    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.1.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = addr.Assign(devs);
    // No queueing discipline: the device's drop-tail queue is the only one,
    // as on joulenet's wired link.
    TrafficControlHelper().Uninstall(devs);
    if (!pcap.empty())
    {
        p2p.EnablePcapAll(pcap);
    }

    transfer::Start(nodes.Get(0), nodes.Get(1), ifs.GetAddress(1), bytes, &HookSocket);
    std::string done = transfer::Run();
    std::printf("%s,%d,%g,%g,%g,%u,%llu,%s,%.4f,%u,%u,%u,%u\n",
                tcp.c_str(),
                sack ? 1 : 0,
                loss,
                onS,
                offS,
                seed,
                static_cast<unsigned long long>(transfer::g_received),
                done.c_str(),
                transfer::WallSeconds(),
                g_lossEntries,
                transfer::g_retx,
                g_rtos,
                g_recoveries);
    return 0;
}
