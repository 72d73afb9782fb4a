// What both ns-3 reference programs share: TCP configured as joulenet's
// defaults, one bulk transfer from node `from` to node `to` measured at the
// sink (completion = the last byte's arrival, from the SYN at time 0), the
// sender's retransmissions counted, and the program's own wall time.
#ifndef JOULENET_NS3_TRANSFER_H
#define JOULENET_NS3_TRANSFER_H

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"

#include <chrono>
#include <string>

namespace transfer
{
using namespace ns3;

inline uint64_t g_target = 0;
inline uint64_t g_received = 0;
inline double g_done = -1;
inline uint32_t g_retx = 0;
inline const auto g_wallStart = std::chrono::steady_clock::now();

// TCP as joulenet's defaults: no timestamps, initial window 10, delayed
// ACKs every 2 segments or 200 ms (ns-3's defaults too), the given buffers.
inline void
ConfigureTcp(const std::string& congestionOps, uint32_t mss, bool sack, uint32_t sndBuf,
             uint32_t rcvBuf)
{
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::" + congestionOps));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(sndBuf));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(rcvBuf));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
}

inline void
OnRx(Ptr<const Packet> p, const Address&)
{
    g_received += p->GetSize();
    if (g_done < 0 && g_received >= g_target)
    {
        g_done = Simulator::Now().GetSeconds();
        Simulator::Stop();
    }
}

inline void
OnRetransmission(Ptr<const Packet>, const TcpHeader&, const Address&, const Address&,
                 Ptr<const TcpSocketBase>)
{
    ++g_retx;
}

// Starts `bytes` of bulk data from `from` to `to` at time 0; `hook` gets the
// sender's socket once it exists.
inline void
Start(Ptr<Node> from, Ptr<Node> to, Ipv4Address toAddr, uint64_t bytes,
      void (*hook)(Ptr<Socket>))
{
    g_target = bytes;
    uint16_t port = 5000;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sink = sinkHelper.Install(to);
    sink.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&OnRx));
    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(toAddr, port));
    bulk.SetAttribute("MaxBytes", UintegerValue(bytes));
    ApplicationContainer src = bulk.Install(from);
    sink.Start(Seconds(0));
    src.Start(Seconds(0));
    // The socket exists once the application has started.
    Ptr<Application> app = src.Get(0);
    Simulator::Schedule(NanoSeconds(1), [app, hook]() {
        Ptr<Socket> s = DynamicCast<BulkSendApplication>(app)->GetSocket();
        s->TraceConnectWithoutContext("Retransmission", MakeCallback(&OnRetransmission));
        if (hook)
        {
            hook(s);
        }
    });
}

// Runs the simulation (at most 3000 s) and returns the completion time as a
// CSV field (empty if the transfer did not finish).
inline std::string
Run()
{
    Simulator::Stop(Seconds(3000));
    Simulator::Run();
    Simulator::Destroy();
    return g_done < 0 ? "" : std::to_string(g_done);
}

inline double
WallSeconds()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_wallStart).count();
}
} // namespace transfer

#endif
