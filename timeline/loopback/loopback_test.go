package loopback

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheck(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:0": true, "[::1]:9000": true, "127.1.2.3:80": true,
		":8080": false, "0.0.0.0:8080": false, "192.168.1.2:80": false, "[::]:80": false, "example.com:80": false, "127.0.0.1": false,
		"[::ffff:127.0.0.1]:80": true, "LOCALHOST:1": true, "::1:80": false, "[::1]80": false, "[::1": false, "[127.0.0.1]:80": true,
		"127.0.0.1:80:80": false, "[::1]:80:80": false, "": false, "127.000.0.1:80": false, "[::1%lo]:80": false,
		"127.0.0.1:65535": true, "[::1]:0": true,
	} {
		err := Check(addr)
		require.Equal(t, ok, err == nil, "%s: %v", addr, err)
	}
}

// A port that is not a number from 0 to 65535 is refused by the check, in
// one line that quotes it, rather than by strata-serve's listen, whose
// error echoed it raw (attack36b F5).
func TestCheckPort(t *testing.T) {
	for _, addr := range []string{
		"127.0.0.1:99999", "127.0.0.1:65536", "localhost:-1", "[::1]:+80", "127.0.0.1:", "127.0.0.1:http",
		"127.0.0.1:0x50", "127.0.0.1:1\n", "127.0.0.1:\x1b7x\x1b8", "127.0.0.1:1_000", "127.0.0.1: 80",
	} {
		err := Check(addr)
		require.Error(t, err, addr)
		require.Equal(t, fmt.Sprintf("%q: the port is not a number from 0 to 65535", addr), err.Error())
	}
}
