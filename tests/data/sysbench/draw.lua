-- A stand-in "workload" for the Zipfian shape test: no database, each event draws one id
-- through sysbench.rand.default (as oltp_common.lua's get_id does) and the thread prints
-- how often each id came up when it is done.
sysbench.cmdline.options = {
   table_size = {"ids to draw from (1..table_size)", 1000},
}

local counts = {}

function event()
   local id = sysbench.rand.default(1, sysbench.opt.table_size)
   counts[id] = (counts[id] or 0) + 1
end

function thread_done()
   for id, n in pairs(counts) do
      print(string.format("draw %d %d", id, n))
   end
end
