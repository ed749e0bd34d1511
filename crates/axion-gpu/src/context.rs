//! The wgpu instance, adapter, device and queue.

use crate::error::GpuError;

/// What kind of adapter runs the kernels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterReport {
    /// The adapter's name (for lavapipe: `llvmpipe (LLVM …)`).
    pub name: String,
    /// Discrete, integrated, virtual GPU, or CPU (a software driver).
    pub device_type: wgpu::DeviceType,
    /// The graphics API (Vulkan here).
    pub backend: wgpu::Backend,
    /// The driver and its version.
    pub driver: String,
}

impl AdapterReport {
    /// Whether the adapter is real hardware (not a software rasterizer such as
    /// lavapipe, whose device type is `Cpu`).
    pub fn is_hardware(&self) -> bool {
        !matches!(
            self.device_type,
            wgpu::DeviceType::Cpu | wgpu::DeviceType::Other
        )
    }
}

impl std::fmt::Display for AdapterReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({:?}, {:?}, {})",
            self.name, self.device_type, self.backend, self.driver
        )
    }
}

/// A wgpu device ready for compute work.
///
/// The instance is built from the environment, so `WGPU_BACKEND`, `WGPU_ADAPTER_NAME`
/// and the Vulkan loader's `VK_DRIVER_FILES` choose the adapter (for example, force
/// lavapipe on a machine with a GPU with
/// `VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json`).
pub struct GpuContext {
    device: wgpu::Device,
    queue: wgpu::Queue,
    report: AdapterReport,
    limits: wgpu::Limits,
}

impl GpuContext {
    /// Finds an adapter (high performance preferred) and creates a device with the
    /// adapter's own limits. No adapter is an error, [`GpuError::NoAdapter`], not a panic.
    pub fn new() -> Result<Self, GpuError> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let options = wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: None,
            apply_limit_buckets: false,
        };
        let adapter = pollster::block_on(instance.request_adapter(&options)).map_err(|e| {
            GpuError::NoAdapter {
                reason: e.to_string(),
            }
        })?;
        let info = adapter.get_info();
        let report = AdapterReport {
            name: info.name.clone(),
            device_type: info.device_type,
            backend: info.backend,
            driver: format!("{} {}", info.driver, info.driver_info)
                .trim()
                .to_string(),
        };
        let limits = adapter.limits();
        let descriptor = wgpu::DeviceDescriptor {
            label: Some("axion-gpu"),
            required_features: wgpu::Features::empty(),
            required_limits: limits.clone(),
            ..Default::default()
        };
        let (device, queue) =
            pollster::block_on(adapter.request_device(&descriptor)).map_err(|e| {
                GpuError::Device {
                    adapter: report.name.clone(),
                    reason: e.to_string(),
                }
            })?;
        Ok(Self {
            device,
            queue,
            report,
            limits,
        })
    }

    /// The adapter in use.
    pub fn adapter(&self) -> &AdapterReport {
        &self.report
    }
    /// The device.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }
    /// The queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }
    /// The device's limits (the adapter's).
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// Runs `f` inside validation and out-of-memory error scopes and turns a captured
    /// error into [`GpuError::Operation`].
    pub fn checked<T>(&self, f: impl FnOnce(&Self) -> T) -> Result<T, GpuError> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let value = f(self);
        let v = pollster::block_on(validation.pop());
        let o = pollster::block_on(oom.pop());
        match v.or(o) {
            Some(e) => Err(GpuError::Operation {
                reason: e.to_string(),
            }),
            None => Ok(value),
        }
    }

    /// Runs a probe kernel: `entry` of the WGSL `source`, with `input` bound at binding 0
    /// (read) and `outputs` floats at binding 1 (read-write), one invocation per item in
    /// workgroups of 64; returns binding 1. The property tests evaluate shader functions
    /// on batches of inputs this way.
    pub fn run_probe_kernel(
        &self,
        label: &str,
        source: &str,
        entry: &str,
        input: &[f32],
        outputs: usize,
        items: usize,
    ) -> Result<Vec<f32>, GpuError> {
        use wgpu::util::DeviceExt;
        let out_size = (outputs * 4) as u64;
        let buffer = self.checked(|ctx| {
            let device = ctx.device();
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(label),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout: None,
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            });
            let input = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(input),
                usage: wgpu::BufferUsages::STORAGE,
            });
            let output = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: out_size,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &pipeline.get_bind_group_layout(0),
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: input.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: output.as_entire_binding(),
                    },
                ],
            });
            let mut encoder = device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(&pipeline);
                pass.set_bind_group(0, &bind, &[]);
                pass.dispatch_workgroups(
                    items.div_ceil(crate::layout::WORKGROUP as usize) as u32,
                    1,
                    1,
                );
            }
            ctx.queue().submit([encoder.finish()]);
            output
        })?;
        let raw = self.read_back(&buffer, out_size)?;
        Ok(bytemuck::pod_collect_to_vec(&raw))
    }
    /// Copies `size` bytes of `buffer` (which needs `COPY_SRC`) back to the host.
    pub fn read_back(&self, buffer: &wgpu::Buffer, size: u64) -> Result<Vec<u8>, GpuError> {
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("axion-gpu readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, size);
        self.queue.submit([encoder.finish()]);
        let (tx, rx) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        let op = |reason: String| GpuError::Operation { reason };
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| op(e.to_string()))?;
        rx.recv()
            .map_err(|e| op(e.to_string()))?
            .map_err(|e| op(e.to_string()))?;
        let bytes = staging
            .get_mapped_range(..)
            .map_err(|e| op(e.to_string()))?
            .to_vec();
        staging.unmap();
        Ok(bytes)
    }
}
