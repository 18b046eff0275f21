// libcni-runner drives CNI plugins through Debian's libcni (the library containerd, cri-o and cnitool use),
// so vpc-cni-kit's tests exercise plugins with third-party runtime code. It prints exactly one JSON line:
//
//	{"ok":true,"result":{...}}                      (add, cached: the result; version, validate: the answer)
//	{"ok":false,"error":{"code":N,"msg":"...","details":"..."}}
//
// Build offline in GOPATH mode (see build.sh): GO111MODULE=off GOPATH=/usr/share/gocode go build.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
)

type output struct {
	OK     bool        `json:"ok"`
	Result interface{} `json:"result,omitempty"`
	Error  *types.Error `json:"error,omitempty"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: libcni-runner add|check|del|cached|validate|version [flags]")
		os.Exit(64)
	}
	cmd := os.Args[1]
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	conflist := fs.String("conflist", "", "network configuration list file")
	binDirs := fs.String("bin-dir", "", "plugin directories, colon separated")
	cacheDir := fs.String("cache-dir", "", "libcni result cache directory")
	netns := fs.String("netns", "", "network namespace path")
	id := fs.String("id", "", "container id")
	ifname := fs.String("ifname", "eth0", "interface name")
	args := fs.String("args", "", "CNI_ARGS, K=V;K=V")
	capArgs := fs.String("cap-args", "", "capability arguments as a JSON object")
	plugin := fs.String("plugin", "", "plugin type (version)")
	timeout := fs.Duration("timeout", 60*time.Second, "overall timeout")
	_ = fs.Parse(os.Args[2:])

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	cni := libcni.NewCNIConfigWithCacheDir(strings.Split(*binDirs, ":"), *cacheDir, nil)

	result, err := run(ctx, cni, cmd, *conflist, *plugin, runtimeConf(*id, *netns, *ifname, *args, *capArgs, *cacheDir))
	emit(result, err)
}

func runtimeConf(id, netns, ifname, args, capArgs, cacheDir string) *libcni.RuntimeConf {
	rt := &libcni.RuntimeConf{ContainerID: id, NetNS: netns, IfName: ifname, CacheDir: cacheDir}
	for _, pair := range strings.Split(args, ";") {
		if kv := strings.SplitN(pair, "=", 2); len(kv) == 2 {
			rt.Args = append(rt.Args, [2]string{kv[0], kv[1]})
		}
	}
	if capArgs != "" {
		if err := json.Unmarshal([]byte(capArgs), &rt.CapabilityArgs); err != nil {
			emit(nil, fmt.Errorf("bad -cap-args: %w", err))
		}
	}
	return rt
}

func run(ctx context.Context, cni *libcni.CNIConfig, cmd, conflist, plugin string, rt *libcni.RuntimeConf) (interface{}, error) {
	if cmd == "version" {
		return cni.GetVersionInfo(ctx, plugin)
	}
	list, err := libcni.ConfListFromFile(conflist)
	if err != nil {
		return nil, err
	}
	switch cmd {
	case "add":
		return cni.AddNetworkList(ctx, list, rt)
	case "check":
		return nil, cni.CheckNetworkList(ctx, list, rt)
	case "del":
		return nil, cni.DelNetworkList(ctx, list, rt)
	case "cached":
		return cni.GetNetworkListCachedResult(list, rt)
	case "validate":
		return cni.ValidateNetworkList(ctx, list)
	}
	return nil, fmt.Errorf("unknown command %q", cmd)
}

func emit(result interface{}, err error) {
	out := output{OK: err == nil, Result: result}
	if err != nil {
		var te *types.Error
		if errors.As(err, &te) {
			out.Error = te
		} else {
			out.Error = &types.Error{Code: 0, Msg: err.Error()}
		}
	}
	b, mErr := json.Marshal(out)
	if mErr != nil {
		fmt.Fprintln(os.Stderr, mErr)
		os.Exit(70)
	}
	fmt.Println(string(b))
	os.Exit(0)
}
