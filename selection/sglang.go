package selection

import "github.com/diffusion-check/diffusion-check/internal/pyimport"

// sglangRules resolve the imports by a computed name that SGLang's diffusion server reaches
// (`sglang serve --model-type diffusion`; python/sglang/ upstream as of 2026-08-17, read from
// the fork AsherBond/sglang). Each was found by running the closure from
// sglang.multimodal_gen.runtime.entrypoints.cli.serve over that tree and reading the call;
// a site not listed here makes every Python change select the server's cases, with the site
// named, until a rule (built in, or a suite's `imports.dynamic`) resolves it.
var sglangRules = []pyimport.Rule{
	// The pipeline registry imports every module of the pipelines package when a server
	// builds its pipeline (pipelines_core/__init__.py build_pipeline calls it).
	{Module: "sglang.multimodal_gen.registry", Func: "_discover_and_register_pipelines", Kind: pyimport.Package,
		Loads: "sglang.multimodal_gen.runtime.pipelines", Recursive: true,
		Source: "multimodal_gen/registry.py _discover_and_register_pipelines: pkgutil.walk_packages + importlib.import_module"},
	// The component loaders register themselves by importing their own package's modules.
	{Module: "sglang.multimodal_gen.runtime.loader.component_loaders.component_loader", Func: "ComponentLoader._ensure_loaders_registered",
		Kind: pyimport.Package, Loads: "sglang.multimodal_gen.runtime.loader.component_loaders",
		Source: "multimodal_gen/runtime/loader/component_loaders/component_loader.py ComponentLoader._ensure_loaders_registered: pkgutil.iter_modules"},
	// Model classes are loaded by the architecture names of the model's own config
	// (model_index.json), which only the model repository holds: the suite names the
	// model's modules in imports.modules, or every model module counts.
	{Module: "sglang.multimodal_gen.runtime.models.registry", Func: "_LazyRegisteredModel.load_model_cls", Kind: pyimport.Named,
		Loads: "sglang.multimodal_gen.runtime.models",
		Source: "multimodal_gen/runtime/models/registry.py _discover_and_register_models (EntryClass of runtime/models/<component>/<file>.py) " +
			"and _LazyRegisteredModel.load_model_cls"},
	// Loaders by qualified name: the names are string constants of the tree (platforms,
	// attention backends, LazyImport targets, kernel specs), which the closure follows.
	{Module: "sglang.multimodal_gen.utils", Func: "resolve_obj_by_qualname", Kind: pyimport.Qualified,
		Source: "multimodal_gen/utils.py resolve_obj_by_qualname; callers platforms/__init__.py, platforms/interface.py, " +
			"layers/attention/selector.py pass string constants"},
	{Module: "sglang.utils", Func: "resolve_obj_by_qualname", Kind: pyimport.Qualified, Source: "sglang/utils.py resolve_obj_by_qualname"},
	{Module: "sglang.utils", Func: "LazyImport._load", Kind: pyimport.Qualified, Source: "sglang/utils.py LazyImport(module_name, class_name)"},
	{Module: "sglang.srt.utils.common", Func: "dynamic_import", Kind: pyimport.Qualified, Source: "srt/utils/common.py dynamic_import(func_path)"},
	{
		Module: "sglang.srt.utils.common",
		Func:   "parse_module_path",
		Kind:   pyimport.Qualified,
		Source: "srt/utils/common.py parse_module_path (a patch target's module path)",
	},
	{
		Module: "sglang.srt.configs.linear_attn_model_registry",
		Func:   "import_backend_class",
		Kind:   pyimport.Qualified,
		Source: "srt/configs/linear_attn_model_registry.py import_backend_class(dotted_name)",
	},
	{Module: "sglang.kernels.spec", Func: "KernelSpec.load", Kind: pyimport.Qualified, Source: "kernels/spec.py KernelSpec.load: target 'module:attr'"},
	{
		Module: "sglang.srt.managers.rust_server",
		Func:   "NativeMmFamily.serves",
		Kind:   pyimport.Qualified,
		Source: "srt/managers/rust_server.py NativeMmFamily.serves: mm_processor 'module:Class'",
	},
	{
		Module: "sglang.srt.mem_cache.storage.backend_factory",
		Func:   "StorageBackendFactory._load_backend_class",
		Kind:   pyimport.Qualified,
		Source: "srt/mem_cache/storage/backend_factory.py: registered module paths",
	},
	{
		Module: "sglang.srt.mem_cache.embedding_store",
		Func:   "EmbeddingStoreFactory._load_backend_class",
		Kind:   pyimport.Qualified,
		Source: "srt/mem_cache/embedding_store.py: registered module paths",
	},
	{
		Module: "sglang.srt.debug_utils.source_patcher.code_patcher",
		Func:   "_resolve_target",
		Kind:   pyimport.Qualified,
		Source: "srt/debug_utils/source_patcher/code_patcher.py _resolve_target(qualified_name)",
	},
	{Module: "sglang.srt.debug_utils.dumper", Func: "_load_function", Kind: pyimport.Qualified, Source: "srt/debug_utils/dumper.py _load_function(path)"},
	{
		Module: "sglang.srt.model_executor.hook_manager",
		Func:   "resolve_callable",
		Kind:   pyimport.Qualified,
		Source: "srt/model_executor/hook_manager.py resolve_callable(path)",
	},
	{Module: "sglang.test.scripted_runtime.utils", Func: "resolve_fn", Kind: pyimport.Qualified, Source: "sglang/test/scripted_runtime/utils.py resolve_fn"},
	{Module: "sglang.srt.entrypoints.sidecar", Func: "_run_sidecar", Kind: pyimport.Qualified, Source: "srt/entrypoints/sidecar.py _run_sidecar(module_name)"},
	// Hunyuan3D's YAML targets: a registered alias or class (the model registry above),
	// else a qualified name.
	{Module: "sglang.multimodal_gen.runtime.pipelines.hunyuan3d_pipeline", Func: "Hunyuan3D2Pipeline._resolve_class", Kind: pyimport.Qualified,
		Source: "runtime/pipelines/hunyuan3d_pipeline.py Hunyuan3D2Pipeline._resolve_class: ModelRegistry.resolve_by_alias, then import_module(target module)"},
	// The kernel ops package imports its groups, a tuple of its own submodules.
	{
		Module: "sglang.kernels.ops",
		Kind:   pyimport.Package,
		Loads:  "sglang.kernels.ops",
		Source: "kernels/ops/__init__.py: import_module(f\"{__name__}.{_group}\") for _GROUPS",
	},
	// Files from outside the tree: a model repository's custom code, flashinfer's sources,
	// built Rust extensions.
	{
		Module: "sglang.multimodal_gen.runtime.loader.component_loaders.vae_loader",
		Func:   "VAELoader.load_customized",
		Kind:   pyimport.Outside,
		Source: "vae_loader.py: the model repository's auto_map module file",
	},
	{
		Module: "sglang.multimodal_gen.runtime.utils.model_overlay",
		Func:   "_run_overlay_custom_materializer",
		Kind:   pyimport.Outside,
		Source: "model_overlay.py: the overlay's custom_materializer script",
	},
	{
		Module: "sglang.multimodal_gen.runtime.layers.attention.backends.subblock_sparse.router",
		Func:   "load_bsa_attn_blk64_fwd._load",
		Kind:   pyimport.Outside,
		Source: "subblock_sparse/router.py: flashinfer's cute_dsl sources",
	},
	{
		Module: "sglang.srt.rust_extensions.loader",
		Func:   "_import_bundled_extension",
		Kind:   pyimport.Outside,
		Source: "srt/rust_extensions/loader.py: a built extension module",
	},
	{
		Module: "sglang.srt.rust_extensions.loader",
		Func:   "_load_extension_from_path",
		Kind:   pyimport.Outside,
		Source: "srt/rust_extensions/loader.py: a built extension file",
	},
	// Registries of the language-model server that share the tree: no module under
	// multimodal_gen/ calls them (checked by grep over multimodal_gen/ at 2026-08-17).
	{
		Module: "sglang.srt.models.registry",
		Func:   "import_model_classes",
		Kind:   pyimport.Ignored,
		Source: "srt/models/registry.py import_model_classes: the LLM model registry",
	},
	{
		Module: "sglang.srt.managers.multimodal_processor",
		Func:   "import_processors",
		Kind:   pyimport.Ignored,
		Source: "srt/managers/multimodal_processor.py import_processors: called by srt/managers/tokenizer_manager.py",
	},
	{
		Module: "sglang.srt.dllm.algorithm",
		Func:   "import_algorithms",
		Kind:   pyimport.Ignored,
		Source: "srt/dllm/algorithm/__init__.py import_algorithms: diffusion-LLM decoding of the LLM server",
	},
}
