package main

import "time"

func time_us(n int) time.Duration { return time.Duration(n) * time.Microsecond }
