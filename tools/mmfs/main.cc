// mmfs: pack image-caption datasets into LMDB shards and mount them as ordinary read-only files.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <string_view>

#include "fs/fuse/auto_unmount.h"
#include "tools/mmfs/commands.h"

namespace {

// For options whose empty value would quietly mean "not given": `--endpoint "$EP"` with EP unset
// would send requests signed with the user's keys to AWS instead of the store named, `--ca-file
// ""` would trust every system CA, `--log-file ""` log to syslog. Given, a value must be there.
const CLI::Validator kNotEmpty(
    [](std::string& value) {
      return value.empty() ? std::string("given empty; leave the option out for its default")
                           : std::string();
    },
    "", "NOT_EMPTY");

// The options of a command that takes a dataset's URL (remote_dataset.h).
void AddRemoteFlags(CLI::App* cmd, mmfs::cli::RemoteFlags* flags) {
  cmd->add_option("--cache-dir", flags->cache_dir,
                  "For a URL: where the manifest and index are copied (default: " +
                      mmfs::cli::DefaultRemoteCacheDir() + ")")
      ->check(kNotEmpty);
  cmd->add_option("--endpoint", flags->endpoint,
                  "For s3:// URLs: the S3-compatible store's URL (default: AWS_ENDPOINT_URL, "
                  "else AWS's endpoint for the bucket)")
      ->check(kNotEmpty);
  cmd->add_option("--ca-file", flags->ca_file,
                  "For https:// and s3:// over https: trust only the CAs in this PEM file, not "
                  "the system's")
      ->check(kNotEmpty);
}

// CLI11 answers a word that names no subcommand with "A subcommand is required": say instead
// that the word is not a command, and which ones there are. `argv[at]` is where `app`'s
// subcommand goes; 0 if it names one (or is an option, or absent), else the exit code.

int CheckCommandWord(CLI::App* app, int argc, char** argv, int at, const std::string& parent) {
  if (at >= argc || argv[at][0] == '-') return 0;
  const std::string word = argv[at];
  std::string names;
  for (const CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    if (sub->check_name(word)) return 0;
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  const std::string help = "mmfs " + parent + (parent.empty() ? "" : " ") + "--help";
  mmfs::cli::PrintError("unknown command '" + (parent.empty() ? "" : parent + " ") + word +
                        "'; the " + (parent.empty() ? "" : parent + " ") + "commands are " +
                        names + " (see '" + help + "')");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "mmfs packs image-caption datasets (folders of key.jpg + key.txt files) into a few large\n"
      "LMDB shards, and mounts them read-only through FUSE so that unmodified loaders\n"
      "(torchvision ImageFolder, DataLoader) read them as ordinary files, only faster.\n\n"
      "  mmfs pack ./data ./data.mmfs           pack a folder tree\n"
      "  mmfs mount ./data.mmfs /mnt/data       serve it (returns once the mount works)\n"
      "  mmfs stats /mnt/data                   what the mount is doing\n"
      "  mmfs umount /mnt/data                  unmount\n",
      "mmfs"};
  app.set_version_flag("--version", "mmfs " MMFS_VERSION);
  app.require_subcommand(1);
  app.get_formatter()->column_width(34);

  mmfs::cli::PackArgs pack;
  CLI::App* pack_cmd = app.add_subcommand(
      "pack",
      "Pack datasets into one dataset directory: mmfs pack SRC [SRC...] DST\n"
      "Every regular file appears at its path in the mount. Files sharing a key (000123.jpg,\n"
      "000123.txt, 000123.json) are stored together as one sample; every JPEG is checked and\n"
      "every file checksummed (xxh3). DST appears only when complete.\n"
      "Sources (detected, or --from): a folder tree (ImageFolder, img2dataset 'files'); tar\n"
      "shards (WebDataset, img2dataset; .tar, .tar.gz), each shown as a folder named after it,\n"
      "given one by one or as a folder of tars; a Hugging Face imagefolder (metadata.jsonl:\n"
      "the caption becomes key.txt, the row key.json); COCO captions (--coco-annotations);\n"
      "the tars under a bucket prefix (s3://BUCKET/PREFIX/), read straight from the store, or\n"
      "the tars a web server serves (https://HOST/shards/{00000..00099}.tar).\n"
      "Several sources merge at the root; a path two sources both provide is an error.\n"
      "DST may be a bucket (s3://BUCKET/PREFIX/NAME.mmfs): each shard is uploaded as soon as\n"
      "it is packed and removed here (at most 3 shards on local disk, in --staging-dir), and\n"
      "the manifest goes last, so the URL mounts only once the dataset is whole.\n\n"
      "Examples:\n"
      "  mmfs pack ./train ./train.mmfs\n"
      "  mmfs pack /data/laion/ /data/laion.mmfs            (a folder of 00000.tar ...)\n"
      "  mmfs pack s3://datasets/laion/ /data/laion.mmfs    (its .tar objects, no local copy)\n"
      "  mmfs pack s3://datasets/laion/ s3://datasets/laion.mmfs   (bucket to bucket)\n"
      "  mmfs pack train2017 --coco-annotations captions_train2017.json coco.mmfs");
  pack_cmd->add_option("SRC... DST", pack.paths, "Sources, then the dataset directory to create")
      ->required()
      ->expected(2, -1);
  pack_cmd->add_option("--from", pack.from,
                       "Source format: auto, folder, webdataset, hf (Hugging Face imagefolder)")
      ->check(CLI::IsMember({"auto", "folder", "webdataset", "hf"}))
      ->capture_default_str();
  pack_cmd->add_option("--caption-field", pack.caption_fields,
                       "Hugging Face metadata column holding the caption (default: text, then "
                       "caption); repeat to try several");
  pack_cmd->add_option("--coco-annotations", pack.coco_annotations,
                       "COCO captions file (captions_train2017.json); SRC is its image folder")
      ->check(CLI::ExistingFile);
  pack_cmd->add_option("-j,--jobs", pack.jobs,
                       "Threads reading and checking samples (default: one per CPU); the "
                       "output is the same for any number");
  pack_cmd->add_option("--shard-size", pack.shard_size,
                       "Target size of each LMDB shard (e.g. 512M, 1G)")
      ->capture_default_str();
  pack_cmd->add_option("--on-bad", pack.on_bad,
                       "What to do with a broken image: fail (stop), skip (leave out its sample), keep")
      ->check(CLI::IsMember({"fail", "skip", "keep"}))
      ->capture_default_str();
  pack_cmd->add_option("--endpoint", pack.endpoint,
                       "For s3:// sources and DST: the S3-compatible store's URL (default: "
                       "AWS_ENDPOINT_URL, else AWS's endpoint for the bucket)")
      ->check(kNotEmpty);
  pack_cmd->add_option("--ca-file", pack.ca_file,
                       "For s3:// sources and DST over https: trust only the CAs in this PEM file")
      ->check(kNotEmpty);
  pack_cmd->add_option("--staging-dir", pack.staging_dir,
                       "For an s3:// DST: where shards wait for their upload, at most 3 at a "
                       "time (3x --shard-size of disk; default: $XDG_CACHE_HOME/mmfs/pack-staging "
                       "or ~/.cache/mmfs/pack-staging)")
      ->check(kNotEmpty);
  pack_cmd->add_flag("--force", pack.force, "Replace DST if it is an existing dataset");
  pack_cmd->add_flag("--resume", pack.resume,
                     "Continue an interrupted pack to DST (same sources and options) from its "
                     "last finished shard");
  pack_cmd->add_option("--view", pack.views,
                       "Also build the view of side N once packed (repeatable): see 'mmfs view "
                       "add --help'")
      ->check(CLI::Range(16, 8192));
  pack_cmd->add_option("--view-quality", pack.view_quality,
                       "JPEG and lossy WebP quality of --view images (1-100)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  pack_cmd->add_flag("-q,--quiet", pack.quiet, "Print only warnings and errors");
  pack_cmd->add_flag("--json", pack.json, "Print the summary as JSON on stdout");

  mmfs::cli::MountArgs mount;
  CLI::App* mount_cmd = app.add_subcommand(
      "mount",
      "Mount a packed dataset read-only at MNT.\n"
      "Without -f, mmfs starts a daemon and returns 0 once the mount serves. The form\n"
      "'mmfs mount DST MNT -o opt,opt' is the one mount.fuse3 and /etc/fstab use.\n"
      "mmfs options (-o): memory=SIZE (64M or more), ram_cache=SIZE, cache_dir=DIR,\n"
      "  ssd_cache=SIZE (1M or more), threads=N (1-256), read_ahead_kb=N (0-65536; 0: the\n"
      "  kernel's default), readahead=on|off, readdirplus=off|auto|always, nonempty, overlay,\n"
      "  miss_threads=N (0-256, default 16: READs that wait on a remote or slow origin are\n"
      "    answered from these threads, so cache hits never wait behind them; 0: on the FUSE\n"
      "    threads),\n"
      "  fill=auto|on|off (fetch the dataset into the SSD tier, or the RAM tier, ahead of its\n"
      "    readers, at the link's speed; auto, the default for a URL: once a training job is\n"
      "    seen (a hint, or 64 files read), never for ls, find or a few files; a dataset larger\n"
      "    than the tier keeps a fixed share; mmfs stats shows progress and the time left),\n"
      "  fill_chunk=SIZE (what one request of the fill reads, 64K..64M, default 8M; the same\n"
      "    on every host that shares a fill through cluster_cache),\n"
      "  hint=on|off|owner (MNT/.mmfs/hint takes a shuffled epoch's order of paths; with\n"
      "    allow_other anyone may write it and only files every user may read count; owner:\n"
      "    only the mounting user may write it, and every line counts; see README),\n"
      "  push=on|off (prefetched files go into the page cache at lookup, sparing a READ),\n"
      "  transport=auto|uring|classic (how requests reach the daemon: FUSE over io_uring where\n"
      "    the kernel offers it, else /dev/fuse; auto picks; mmfs stats says which),\n"
      "  hold_once=on|off (files the RAM tier holds leave the page cache after their READ;\n"
      "  default on in shared-limit mode: --memory, or no option under a cgroup limit),\n"
      "  direct=on|off (read the shards with O_DIRECT, past the page cache),\n"
      "  huge_pages=on|off (the daemon's heap on transparent huge pages where the kernel's\n"
      "    THP setting is madvise: fewer page faults as the RAM tier fills; not in\n"
      "    shared-limit mode),\n"
      "  lock_index=on|off (keep the index's pages in memory once read; default on in\n"
      "    shared-limit mode; needs CAP_IPC_LOCK or an RLIMIT_MEMLOCK of the index's size),\n"
      "  opendir=on|off (on: an OPENDIR per listing; off, the default: the kernel keeps\n"
      "  listings without asking), readers=on|off (the Readers section of mmfs stats),\n"
      "  extents=auto|off|SIZE (a miss from a slow origin reads the shard extent around its\n"
      "  sample and keeps the neighbours; auto sizes it from the origin's measured latency\n"
      "  and bandwidth and falls back to sample reads where that does not pay),\n"
      "  cluster_cache=HOST:PORT[,HOST:PORT...] (a memcached tier shared by the job's hosts;\n"
      "    a dataset from a URL is then fetched once per job, each host its part),\n"
      "  cluster_self=HOST:PORT (this host's server in that list: the part it fetches first;\n"
      "    default: the one server whose address is this host's).\n"
      "Other -o options go to FUSE (allow_other, auto_unmount, ...). Every mount is nosuid,nodev\n"
      "(-o suid and -o dev are refused); numbers and sizes are checked whole, for -o and the\n"
      "long options alike.\n\n"
      "Example: mmfs mount data.mmfs /mnt/data --ram-cache 8G --cache-dir /nvme/mmfs");
  mount_cmd->add_option("DST", mount.dataset, "Dataset directory made by 'mmfs pack'")->required();
  mount_cmd->add_option("MNT", mount.mountpoint, "Empty directory to mount on")->required();
  mount_cmd->add_flag("-f,--foreground", mount.foreground, "Stay in the foreground, log to stderr");
  mount_cmd->add_flag("-d,--debug", mount.debug, "Trace every FUSE request (implies -f)");
  mount_cmd->add_option("-o", mount.options, "Mount options, comma-separated")->allow_extra_args(false);
  mount_cmd->add_option("--memory", mount.memory,
                        "All the memory the mount may use, page cache included: split between "
                        "the daemon, the RAM tier and the mount's page cache. Default under a "
                        "memory cgroup's limit (a container, MemoryMax=): what the processes in "
                        "it leave, followed as they grow; outside one: a RAM tier of 1/8 of "
                        "memory beside the page cache");
  mount_cmd->add_option("--ram-cache", mount.ram_cache,
                        "RAM tier budget. Default outside a memory cgroup's limit: 1/8 of memory, "
                        "64M..8G; under one, shared-limit mode (see --memory), which this "
                        "option alone turns off for a tier of this size beside the page cache");
  mount_cmd->add_option("--cache-dir", mount.cache_dir,
                        "Local SSD directory for the SSD cache tier (kept across mounts)");
  mount_cmd->add_option("--endpoint", mount.remote.endpoint,
                        "For s3:// URLs: the S3-compatible store's URL (default: "
                        "AWS_ENDPOINT_URL, else AWS's endpoint for the bucket)")
      ->check(kNotEmpty);
  mount_cmd->add_option("--ca-file", mount.remote.ca_file,
                        "For https:// and s3:// over https: trust only the CAs in this PEM "
                        "file, not the system's")
      ->check(kNotEmpty);
  mount_cmd->add_option("--ssd-cache", mount.ssd_cache,
                        "SSD cache budget (default half of the free space there plus what the tier "
                        "already holds, at most 1T)");
  mount_cmd->add_flag("--overlay", mount.overlay,
                      "Stack a read-only overlayfs on the mount (root only): the kernel then "
                      "answers the isatty() ioctl Python's open() sends for every file, so warm "
                      "reads by Python loaders never reach the daemon. Unmount with 'umount MNT' "
                      "or 'mmfs umount MNT'");
  mount_cmd->add_option("--view", mount.view,
                        "serve view N (built by 'mmfs view add DST N' or 'mmfs pack --view N') as "
                        "the whole mount, for loaders that take only a root; without it the view "
                        "is at MNT/@N/")
      ->check(CLI::Range(16, 8192));  // the sides a view can have (view add, pack --view)
  mount_cmd->add_option("--readahead", mount.readahead,
                        "on (default): a miss loads the whole sample (k.jpg brings k.txt); off");
  mount_cmd->add_option("--cluster-cache", mount.cluster_cache,
                        "memcached servers HOST:PORT[,HOST:PORT...] shared by all hosts of a job: "
                        "a tier below the SSD tier, filled from origin reads; a dataset from a "
                        "URL is fetched from the store once per job, shared out between the "
                        "hosts through it");
  mount_cmd->add_option("--cluster-self", mount.cluster_self,
                        "This host's own server in --cluster-cache (one memcached per host): "
                        "the part of the dataset it fetches from the store first")
      ->check(kNotEmpty);
  mount_cmd->add_option("--threads", mount.threads,
                        "Maximum FUSE worker threads, 1 to 256 (default 16)")
      ->type_name("N");
  mount_cmd->add_option("--log-file", mount.log_file, "Log to this file (default: syslog when "
                                                     "daemonized, stderr with -f)")
      ->check(kNotEmpty);

  mmfs::cli::UmountArgs umount;
  CLI::App* umount_cmd = app.add_subcommand(
      "umount",
      "Unmount an mmfs mount (fusermount3 -u for a user's own). Anything else mounted at MNT\n"
      "is refused, whoever asks.");
  umount_cmd->add_option("MNT", umount.mountpoint, "Mount point")->required();
  umount_cmd->add_flag("-z,--lazy", umount.lazy, "Detach now, finish when files are closed");

  mmfs::cli::StatsArgs stats;
  CLI::App* stats_cmd = app.add_subcommand(
      "stats",
      "Show what a mount is doing: requests, latencies, cache tiers, origin reads, memory,\n"
      "its readers (is data loading the bottleneck?), with tuning hints. --watch N prints\n"
      "live rates; --json and --prometheus are for tools\n"
      "(the same documents are the files MNT/.mmfs/stats and MNT/.mmfs/metrics).");
  stats_cmd->add_option("MNT", stats.mountpoint, "Mount point")->required();
  stats_cmd->add_flag("--json", stats.json, "Print the raw JSON document (.mmfs/stats)");
  stats_cmd->add_flag("--prometheus", stats.prometheus,
                      "Print the Prometheus text format (.mmfs/metrics)");
  stats_cmd->add_flag("--what-if", stats.what_if,
                      "Predicted hit ratio of the RAM and SSD tiers at other sizes (10%-200% of "
                      "today's), from a sample of the reads, and the last epoch's working set");
  stats_cmd->add_option("--plot", stats.plot,
                        "Draw the what-if curves and the hit ratios over time into FILE.png "
                        "(gnuplot)")
      ->check(kNotEmpty);
  stats_cmd->add_option("--watch", stats.watch,
                        "Print a line of per-second rates every SECONDS (e.g. --watch 1)")
      ->check(CLI::PositiveNumber);
  stats_cmd->add_option("--window", stats.window,
                        "Readers: the last SECONDS the stall and CPU shares cover (default 10, at "
                        "most 62; --watch uses its interval)")
      ->check(CLI::Range(0.1, 3600.0));
  stats_cmd->add_option("--top", stats.top,
                        "Readers: show the N processes waiting longest (default 8), the rest as "
                        "one row")
      ->check(CLI::Range(1, 1000));

  mmfs::cli::WarmupArgs warmup;
  CLI::App* warmup_cmd = app.add_subcommand(
      "warmup",
      "Load files into a cache tier before training, in pack order with large reads (default:\n"
      "the whole mount into the SSD tier); already cached files are skipped. --check shows how\n"
      "much of each path is resident per tier; --evict drops paths from the caches. Works\n"
      "while training reads the mount.\n\n"
      "Examples:\n"
      "  mmfs warmup /mnt/data                      everything, into the SSD tier\n"
      "  mmfs warmup /mnt/data /mnt/data/val --tier ram\n"
      "  mmfs warmup --check /mnt/data /mnt/data/train\n"
      "  mmfs warmup --evict /mnt/data /mnt/data/old");
  warmup_cmd->add_option("MNT", warmup.mountpoint, "The mmfs mount")->required();
  warmup_cmd->add_option("PATH", warmup.paths, "Files or folders inside the mount (default: all)");
  warmup_cmd->add_option("--tier", warmup.tier, "Tier to load into: ssd (needs --cache-dir) or ram")
      ->check(CLI::IsMember({"ram", "ssd"}))
      ->capture_default_str();
  warmup_cmd->add_flag("--check", warmup.check, "Only show what is resident in each tier");
  warmup_cmd->add_flag("--evict", warmup.evict, "Drop the paths from the RAM and SSD tiers");
  warmup_cmd->add_flag("--json", warmup.json, "Print the result as JSON");
  warmup_cmd->add_option("--timeout", warmup.timeout_seconds, "Give up after this many seconds");

  mmfs::cli::ViewArgs view_add, view_rm, view_ls;
  CLI::App* view_cmd = app.add_subcommand(
      "view",
      "Smaller copies of a dataset's images, stored beside it, for loaders that resize anyway.\n"
      "A view of side N holds every JPEG, PNG and WebP whose shorter side is over N, resized so\n"
      "that side is N (aspect kept, Lanczos, same format, EXIF orientation and ICC profile\n"
      "kept); smaller images and all other files are the originals, not copied. It lives in\n"
      "DST/views/N/; the dataset's own files are never changed. A loader decoding 256 px images\n"
      "instead of 1000 px ones decodes about 15x fewer pixels. A view changes the pixels the\n"
      "model sees: use it only where training resizes to about N or less anyway.\n\n"
      "  mmfs view add data.mmfs 256        build it (-j threads; Ctrl-C, then --resume)\n"
      "  mmfs view ls data.mmfs             list views, their size and share of the dataset\n"
      "  mmfs view rm data.mmfs 256         remove it");
  view_cmd->require_subcommand(1);
  CLI::App* view_add_cmd = view_cmd->add_subcommand(
      "add",
      "Build the view of side N of DST: mmfs view add DST N\n"
      "Images are read in shard order and resized on -j threads with libvips (shrink-on-load\n"
      "through libjpeg-turbo, then Lanczos3). The view is built in DST/views/.N.partial-PID and\n"
      "appears as DST/views/N only when complete, so an interrupted build never shows; after\n"
      "Ctrl-C or a crash, the same command with --resume continues from its last finished shard.\n"
      "A source image that does not decode: --on-bad fail stops, skip leaves it out of the\n"
      "view, keep serves the original in it (default: what DST was packed with).\n\n"
      "Example: mmfs view add /data/laion.mmfs 256 -j 8 --view-quality 85");
  view_add_cmd->add_option("DST", view_add.dataset, "Dataset directory")->required();
  view_add_cmd->add_option("N", view_add.side, "Shorter side of the view's images, in pixels")
      ->required()
      ->check(CLI::Range(16, 8192));
  view_add_cmd->add_option("-j,--jobs", view_add.jobs, "Threads resizing (default: one per CPU)");
  view_add_cmd->add_option("--view-quality", view_add.quality, "JPEG and lossy WebP quality (1-100)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  view_add_cmd->add_option("--on-bad", view_add.on_bad,
                           "A source image that does not decode: fail, skip (leave it out of the "
                           "view), keep (serve the original)")
      ->check(CLI::IsMember({"fail", "skip", "keep"}));
  view_add_cmd->add_option("--shard-size", view_add.shard_size,
                           "Target size of each view shard; an interrupted build loses at most "
                           "one")
      ->capture_default_str();
  view_add_cmd->add_flag("--resume", view_add.resume,
                         "Continue an interrupted build of this view (same options)");
  view_add_cmd->add_flag("-q,--quiet", view_add.quiet, "Print only warnings and errors");
  view_add_cmd->add_flag("--json", view_add.json, "Print the summary as JSON on stdout");
  CLI::App* view_rm_cmd = view_cmd->add_subcommand(
      "rm", "Remove the view of side N of DST (mounts opened before keep their files open)");
  view_rm_cmd->add_option("DST", view_rm.dataset, "Dataset directory")->required();
  view_rm_cmd->add_option("N", view_rm.side, "Side of the view")->required();
  view_rm_cmd->add_flag("-q,--quiet", view_rm.quiet, "Print nothing on success");
  CLI::App* view_ls_cmd = view_cmd->add_subcommand(
      "ls", "List the views of DST: side, images resized and kept, bytes on disk, share of the\n"
            "dataset, quality; unusable views and unpublished (running or interrupted) builds.");
  view_ls_cmd->add_option("DST", view_ls.dataset, "Dataset directory")->required();
  view_ls_cmd->add_flag("--json", view_ls.json, "Print the list as JSON");

  mmfs::cli::InspectArgs verify;
  CLI::App* verify_cmd = app.add_subcommand(
      "verify",
      "Check a dataset: every shard's and every file's xxh3 checksum. Prints the damaged\n"
      "files and exits 1 if there are any.");
  verify_cmd->add_option("DST", verify.dataset, "Dataset directory, or its http(s):// or s3:// URL")
      ->required();
  AddRemoteFlags(verify_cmd, &verify.remote);
  verify_cmd->add_flag("--json", verify.json, "Print the result as JSON");
  verify_cmd->add_option("-j,--jobs", verify.jobs, "Threads checking (default: one per CPU)");

  mmfs::cli::InspectArgs info;
  CLI::App* info_cmd = app.add_subcommand(
      "info", "Describe a dataset: counts, sizes, shards, source, image sizes, top directories.");
  info_cmd->add_option("DST", info.dataset, "Dataset directory, or its http(s):// or s3:// URL")
      ->required();
  AddRemoteFlags(info_cmd, &info.remote);
  info_cmd->add_flag("--json", info.json, "Print the description as JSON");

  // The auto_unmount watcher a root daemon starts (fs/fuse/auto_unmount.h); not for users.
  if (argc == 4 && std::string_view(argv[1]) == mmfs::fs::kAutoUnmountCommand) {
    return mmfs::fs::RunAutoUnmountWatcher(argv[2], argv[3]);
  }
  if (int bad = CheckCommandWord(&app, argc, argv, 1, ""); bad != 0) return bad;
  if (argc > 1 && view_cmd->check_name(argv[1])) {
    if (int bad = CheckCommandWord(view_cmd, argc, argv, 2, "view"); bad != 0) return bad;
  }
  CLI11_PARSE(app, argc, argv);
  if (view_add_cmd->parsed()) return mmfs::cli::RunViewAdd(view_add);
  if (view_rm_cmd->parsed()) return mmfs::cli::RunViewRm(view_rm);
  if (view_ls_cmd->parsed()) return mmfs::cli::RunViewLs(view_ls);
  if (verify_cmd->parsed()) return mmfs::cli::RunVerify(verify);
  if (warmup_cmd->parsed()) return mmfs::cli::RunWarmup(warmup);
  if (info_cmd->parsed()) return mmfs::cli::RunInfo(info);
  if (pack_cmd->parsed()) return mmfs::cli::RunPack(pack);
  if (mount_cmd->parsed()) return mmfs::cli::RunMount(mount);
  if (umount_cmd->parsed()) return mmfs::cli::RunUmount(umount);
  if (stats_cmd->parsed()) return mmfs::cli::RunStats(stats);
  return 2;
}
