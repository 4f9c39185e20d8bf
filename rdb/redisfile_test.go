package rdb

import (
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"testing"
)

// Files written by real servers (testdata/): Debian's Redis 7.0.15
// (rdbcompression yes) and Redis 7.2.6 (rdbcompression no), both after:
//
//	ZADD small 1 a 2.5 b -0 c 7 100 inf top -inf bottom
//	ZADD ints 1 10 1 9 1 -5
//	ZADD big <i/8> <"long-member-" × i%5>m<i>   for i in 0..199
//	SET str hello; SET num 12345; RPUSH list a b c 1 2 3; SADD iset 1 2 3
//	SADD sset a b c; HSET hash f v g 1
//	XADD st 1-1 k v; XADD st 2-1 k w; XGROUP CREATE st g 0
//	XREADGROUP GROUP g c1 COUNT 1 STREAMS st >
//	SELECT 1; ZADD other 3 x; PEXPIREAT other 4102444800000
//	FUNCTION LOAD (a library)
//	SAVE
func TestRedisFiles(t *testing.T) {
	want := map[string]string{
		"0/small": `"bottom"=-Inf "c"=0 "a"=1 "b"=2.5 "100"=7 "top"=+Inf`,
		"0/ints":  `"-5"=1 "10"=1 "9"=1`,
		"1/other": `"x"=3`,
	}
	var big []string
	for i := range 200 {
		big = append(big, fmt.Sprintf("%q=%v", strings.Repeat("long-member-", i%5)+fmt.Sprintf("m%d", i), float64(i)/8))
	}
	sort.Strings(big)
	want["0/big"] = strings.Join(big, " ")
	for _, name := range []string{"redis-7.0.15.rdb", "redis-7.2.6-nocompression.rdb"} {
		t.Run(name, func(t *testing.T) {
			f, err := os.Open("testdata/" + name)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rd, err := NewReader(f)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			skipped := map[string]int{}
			var expire int64
			for {
				e, err := rd.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if !e.Type.IsZSet() {
					skipped[e.Type.Kind()]++
					continue
				}
				k := fmt.Sprintf("%d/%s", e.DB, e.Key)
				if k == "1/other" {
					expire = e.ExpireAt
				}
				var ents []string
				if _, err := rd.ZSet(func(m []byte, s float64) error {
					if s == 0 {
						s = math.Abs(s)
					}
					ents = append(ents, fmt.Sprintf("%q=%v", m, s))
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if k == "0/big" {
					sort.Strings(ents)
				}
				got[k] = strings.Join(ents, " ")
			}
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s:\n got %s\nwant %s", k, got[k], w)
				}
			}
			if len(got) != len(want) {
				t.Errorf("sorted sets %v", got)
			}
			if fmt.Sprint(skipped) != "map[hash:1 list:1 set:2 stream:1 string:2]" {
				t.Errorf("skipped %v", skipped)
			}
			if expire != 4102444800000 {
				t.Errorf("expiry %d", expire)
			}
			aux := map[string]string{}
			for _, a := range rd.Aux() {
				aux[a[0]] = a[1]
			}
			if !strings.HasPrefix(name, "redis-"+aux["redis-ver"]) {
				t.Errorf("aux redis-ver %q", aux["redis-ver"])
			}
		})
	}
}
