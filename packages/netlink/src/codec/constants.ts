/**
 * Numeric constants from the Linux uapi headers (`linux/netlink.h`, `linux/rtnetlink.h`, `linux/if_link.h`,
 * `linux/if_addr.h`, `linux/fib_rules.h`, `linux/neighbour.h`). Values are ABI and never change.
 * @internal
 */

export const NLMSG_HDRLEN = 16;
export const NLA_HDRLEN = 4;
export const NLA_F_NESTED = 0x8000;
export const NLA_F_NET_BYTEORDER = 0x4000;
export const NLA_TYPE_MASK = ~(NLA_F_NESTED | NLA_F_NET_BYTEORDER) & 0xffff;

export const NLMSG_NOOP = 1;
export const NLMSG_ERROR = 2;
export const NLMSG_DONE = 3;
export const NLMSG_OVERRUN = 4;

export const NLM_F_REQUEST = 0x1;
export const NLM_F_MULTI = 0x2;
export const NLM_F_ACK = 0x4;
export const NLM_F_ECHO = 0x8;
export const NLM_F_DUMP_INTR = 0x10;
export const NLM_F_DUMP = 0x300;
export const NLM_F_REPLACE = 0x100;
export const NLM_F_EXCL = 0x200;
export const NLM_F_CREATE = 0x400;
export const NLM_F_APPEND = 0x800;
/** On an ACK: the original request payload was cut off. */
export const NLM_F_CAPPED = 0x100;
/** On an ACK: extended-ACK TLVs follow. */
export const NLM_F_ACK_TLVS = 0x200;

export const NLMSGERR_ATTR_MSG = 1;
export const NLMSGERR_ATTR_OFFS = 2;

export const RTM_NEWLINK = 16;
export const RTM_DELLINK = 17;
export const RTM_GETLINK = 18;
export const RTM_SETLINK = 19;
export const RTM_NEWADDR = 20;
export const RTM_DELADDR = 21;
export const RTM_GETADDR = 22;
export const RTM_NEWROUTE = 24;
export const RTM_DELROUTE = 25;
export const RTM_GETROUTE = 26;
export const RTM_NEWNEIGH = 28;
export const RTM_DELNEIGH = 29;
export const RTM_GETNEIGH = 30;
export const RTM_NEWRULE = 32;
export const RTM_DELRULE = 33;
export const RTM_GETRULE = 34;

export const AF_UNSPEC = 0;
export const AF_INET = 2;
export const AF_BRIDGE = 7;
export const AF_INET6 = 10;

// ifinfomsg (16 bytes) and IFLA_*
export const IFINFOMSG_LEN = 16;
export const IFLA_ADDRESS = 1;
export const IFLA_BROADCAST = 2;
export const IFLA_IFNAME = 3;
export const IFLA_MTU = 4;
export const IFLA_LINK = 5;
export const IFLA_MASTER = 10;
export const IFLA_TXQLEN = 13;
export const IFLA_OPERSTATE = 16;
export const IFLA_LINKINFO = 18;
export const IFLA_NET_NS_PID = 19;
export const IFLA_IFALIAS = 20;
export const IFLA_NET_NS_FD = 28;
export const IFLA_EXT_MASK = 29;
/** IFLA_EXT_MASK bit: leave the per-link counters out of RTM_NEWLINK answers. */
export const RTEXT_FILTER_SKIP_STATS = 1 << 3;
export const IFLA_LINK_NETNSID = 37;
export const IFLA_INFO_KIND = 1;
export const IFLA_INFO_DATA = 2;
export const IFLA_INFO_SLAVE_KIND = 4;
export const VETH_INFO_PEER = 1;
export const IFLA_VLAN_ID = 1;
export const IFLA_VLAN_PROTOCOL = 5;
export const IFLA_VXLAN_ID = 1;
export const IFLA_VXLAN_GROUP = 2;
export const IFLA_VXLAN_LINK = 3;
export const IFLA_VXLAN_LOCAL = 4;
export const IFLA_VXLAN_TTL = 5;
export const IFLA_VXLAN_LEARNING = 7;
export const IFLA_VXLAN_PORT = 15;
export const IFLA_VXLAN_GROUP6 = 16;
export const IFLA_VXLAN_LOCAL6 = 17;
export const IFLA_BR_STP_STATE = 5;
export const IFLA_BR_VLAN_FILTERING = 7;
export const IFLA_MACVLAN_MODE = 1;
export const IFF_UP = 0x1;
export const IFF_LOOPBACK = 0x8;
export const IFF_RUNNING = 0x40;
export const IFF_NOARP = 0x80;
export const IFF_LOWER_UP = 0x10000;
export const ETH_P_8021Q = 0x8100;
export const ETH_P_8021AD = 0x88a8;

// ifaddrmsg (8 bytes) and IFA_*
export const IFADDRMSG_LEN = 8;
export const IFA_ADDRESS = 1;
export const IFA_LOCAL = 2;
export const IFA_LABEL = 3;
export const IFA_BROADCAST = 4;
export const IFA_FLAGS = 8;
export const IFA_F_NODAD = 0x02;
export const IFA_F_PERMANENT = 0x80;
export const IFA_F_NOPREFIXROUTE = 0x200;

// rtmsg (12 bytes) and RTA_*
export const RTMSG_LEN = 12;
export const RTA_DST = 1;
export const RTA_SRC = 2;
export const RTA_IIF = 3;
export const RTA_OIF = 4;
export const RTA_GATEWAY = 5;
export const RTA_PRIORITY = 6;
export const RTA_PREFSRC = 7;
export const RTA_TABLE = 15;
export const RTA_PREF = 20;
export const RTN_UNICAST = 1;
export const RTN_LOCAL = 2;
export const RTPROT_BOOT = 3;
export const RTPROT_STATIC = 4;
export const RT_SCOPE_UNIVERSE = 0;
export const RT_SCOPE_LINK = 253;
export const RT_SCOPE_HOST = 254;
export const RT_SCOPE_NOWHERE = 255;
export const RT_TABLE_UNSPEC = 0;
export const RT_TABLE_MAIN = 254;
export const RT_TABLE_LOCAL = 255;
export const RTNH_F_ONLINK = 0x4;

// fib_rule_hdr (12 bytes) and FRA_*
export const FIB_RULE_HDR_LEN = 12;
export const FRA_DST = 1;
export const FRA_SRC = 2;
export const FRA_IIFNAME = 3;
export const FRA_GOTO = 4;
export const FRA_PRIORITY = 6;
export const FRA_FWMARK = 10;
export const FRA_TABLE = 15;
export const FRA_FWMASK = 16;
export const FRA_OIFNAME = 17;
export const FRA_PROTOCOL = 21;
export const FR_ACT_TO_TBL = 1;
export const FIB_RULE_INVERT = 0x2;

// ndmsg (12 bytes) and NDA_*
export const NDMSG_LEN = 12;
export const NDA_DST = 1;
export const NDA_LLADDR = 2;
export const NUD_INCOMPLETE = 0x01;
export const NUD_REACHABLE = 0x02;
export const NUD_STALE = 0x04;
export const NUD_DELAY = 0x08;
export const NUD_PROBE = 0x10;
export const NUD_FAILED = 0x20;
export const NUD_NOARP = 0x40;
export const NUD_PERMANENT = 0x80;
export const NTF_PROXY = 0x08;
