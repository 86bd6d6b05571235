"""The Blender side of pipeline.render.blender: run by a Python that has `bpy`, never imported by roomspace.

    python pipeline/render/blender_worker.py

It reads one request a line on standard input, a JSON view (pipeline.render.blender.view_request:
meshes with their materials, the camera, the lights, the engine's settings), builds that scene
from Blender's factory settings, renders it, writes the PNG the request names, and answers one
JSON line: {"seconds": CPU seconds of the whole request} or {"error": "..."}. Its first line says which
Blender it is ({"bpy": "4.5.15"}). Blender's own messages go to standard error, so that standard
output carries only the answers. Every request starts from the factory settings, so a view's
pixels depend on the request alone, never on the views rendered before it.
"""

import json
import os
import sys
import time


def main() -> None:
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what Blender prints goes to standard error
    try:
        import bpy
    except ImportError as error:
        answers.write(json.dumps({"error": f"no bpy in {sys.executable} ({error})"}) + "\n")
        answers.flush()
        return
    answers.write(json.dumps({"bpy": ".".join(str(v) for v in bpy.app.version)}) + "\n")
    answers.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            seconds = render(bpy, json.loads(line))
            answer = {"seconds": seconds}
        except Exception as error:  # one line back, the worker stays up for the next view
            answer = {"error": f"{type(error).__name__}: {error}"}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


def linear(channel: float) -> float:
    """An sRGB channel (0-1) in Blender's linear scene space."""
    return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4


def rgba(hex_colour: str, strength: float = 1.0) -> tuple:
    return (*(linear(int(hex_colour[k : k + 2], 16) / 255) * strength for k in (1, 3, 5)), 1.0)


def render(bpy, request: dict) -> float:
    """Build the request's scene, render it to request["out"]; the CPU seconds it took, all in."""
    started = time.process_time()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    settings = request["settings"]
    materials = {name: material(bpy, name, spec) for name, spec in request["materials"].items()}
    for k, mesh in enumerate(request["meshes"]):
        add_mesh(bpy, scene, f"mesh{k}", mesh, materials)
    for k, light in enumerate(request["lights"]):
        add_light(bpy, scene, f"light{k}", light)
    add_camera(bpy, scene, request["camera"])
    world = bpy.data.worlds.new("world")
    world.use_nodes = True
    background = world.node_tree.nodes["Background"]
    background.inputs["Color"].default_value = rgba(request["world"]["colour"])
    background.inputs["Strength"].default_value = request["world"]["strength"]
    scene.world = world

    out = scene.render
    out.resolution_x, out.resolution_y = request["size"]
    out.resolution_percentage = 100
    out.film_transparent = True
    out.dither_intensity = 0.0
    out.threads_mode = "FIXED"
    out.threads = settings["threads"]
    out.use_stamp = False
    out.image_settings.file_format = "PNG"
    out.image_settings.color_mode = "RGBA"
    out.image_settings.color_depth = "8"
    look = request["look"]
    scene.view_settings.view_transform = look["view_transform"]
    scene.view_settings.look = look["look"]
    scene.view_settings.exposure = look["exposure"]
    scene.view_settings.gamma = 1.0
    engine = request["engine"]
    out.engine = engine
    if engine == "CYCLES":
        cycles = scene.cycles
        cycles.device = "CPU"
        cycles.samples = settings["samples"]
        cycles.use_adaptive_sampling = False
        cycles.seed = 0
        cycles.use_animated_seed = False
        cycles.use_denoising = settings["denoise"]
        cycles.denoiser = "OPENIMAGEDENOISE"
        for key, value in request["cycles"].items():
            setattr(cycles, key, value)
    elif engine == "BLENDER_WORKBENCH":
        spec = request["workbench"]
        display = scene.display
        display.render_aa = str(spec["aa"])
        shading = display.shading
        shading.light = "STUDIO"
        shading.studio_light = spec["studio_light"]
        shading.use_world_space_lighting = spec["world_space"]
        shading.studiolight_rotate_z = spec["rotate_z"]
        shading.color_type = "MATERIAL"
        shading.show_shadows = spec["shadow_intensity"] > 0
        shading.shadow_intensity = spec["shadow_intensity"]
        shading.show_cavity = spec["cavity"] > 0
        shading.cavity_type = "WORLD"
        shading.cavity_ridge_factor = spec["cavity"]
        shading.cavity_valley_factor = spec["cavity"]
        shading.show_specular_highlight = spec["specular"]
        display.light_direction = spec["light_direction"]
        display.shadow_shift = 0.1
        display.shadow_focus = spec["shadow_focus"]
    else:  # EEVEE
        scene.eevee.taa_render_samples = settings["samples"]
    out.filepath = request["out"]
    bpy.ops.render.render(write_still=True)
    return round(time.process_time() - started, 3)


def material(bpy, name: str, spec: dict):
    made = bpy.data.materials.new(name)
    made.use_nodes = True
    shader = made.node_tree.nodes["Principled BSDF"]
    inputs = {"roughness": "Roughness", "metallic": "Metallic", "specular": "Specular IOR Level",
              "sheen": "Sheen Weight", "coat": "Coat Weight"}
    for key, value in spec.items():
        if key in inputs:
            shader.inputs[inputs[key]].default_value = value
    made.roughness = spec.get("roughness", 0.5)  # what Workbench reads
    made.metallic = spec.get("metallic", 0.0)
    return made


def add_mesh(bpy, scene, name: str, mesh: dict, materials: dict) -> None:
    data = bpy.data.meshes.new(name)
    data.from_pydata([tuple(v) for v in mesh["vertices"]], [], [tuple(f) for f in mesh["faces"]])
    data.validate()
    kind = materials[mesh["material"]].copy()  # the class's shading in the part's colour
    colour = rgba(mesh["colour"])
    shader = kind.node_tree.nodes["Principled BSDF"]
    shader.inputs["Base Color"].default_value = colour
    glow = mesh.get("emission", 0.0)
    if glow:
        shader.inputs["Emission Color"].default_value = colour
        shader.inputs["Emission Strength"].default_value = glow
    kind.diffuse_color = colour
    data.materials.append(kind)
    made = bpy.data.objects.new(name, data)
    scene.collection.objects.link(made)


def add_light(bpy, scene, name: str, light: dict) -> None:
    data = bpy.data.lights.new(name, "AREA")
    data.shape = "RECTANGLE"
    data.size, data.size_y = light["size"]
    data.energy = light["power"]
    data.color = rgba(light["colour"])[:3]
    made = bpy.data.objects.new(name, data)
    made.location = light["location"]  # it shines down, along its local -z
    made.visible_camera = False
    scene.collection.objects.link(made)


def add_camera(bpy, scene, camera: dict) -> None:
    from mathutils import Matrix

    data = bpy.data.cameras.new("camera")
    if camera["type"] == "ortho":
        data.type = "ORTHO"
        data.ortho_scale = camera["scale"]
    else:
        data.type = "PERSP"
        data.sensor_fit = "HORIZONTAL"
        data.sensor_width = camera["sensor"]
        data.lens = camera["lens"]
        data.shift_x, data.shift_y = camera["shift"]
    data.clip_start, data.clip_end = camera["clip"]
    made = bpy.data.objects.new("camera", data)
    made.matrix_world = Matrix(camera["matrix"])
    scene.collection.objects.link(made)
    scene.camera = made


if __name__ == "__main__":
    main()
