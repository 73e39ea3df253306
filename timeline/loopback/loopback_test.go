package loopback

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheck(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:0": true, "[::1]:9000": true, "127.1.2.3:80": true,
		":8080": false, "0.0.0.0:8080": false, "192.168.1.2:80": false, "[::]:80": false, "example.com:80": false, "127.0.0.1": false,
		"[::ffff:127.0.0.1]:80": true, "LOCALHOST:1": true, "::1:80": false, "[::1]80": false, "[::1": false, "[127.0.0.1]:80": true,
		"127.0.0.1:80:80": false, "[::1]:80:80": false, "": false, "127.000.0.1:80": false, "[::1%lo]:80": false,
	} {
		err := Check(addr)
		require.Equal(t, ok, err == nil, "%s: %v", addr, err)
	}
}
